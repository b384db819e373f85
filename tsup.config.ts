/**
 * Builds the npm package's JavaScript into `dist/lib/` (beside `dist/agentcli`, the single
 * executable, and `dist/ui/`, the chat UI): ESM, `.d.ts` and source maps for the library
 * entries `agentcli` (index) and `agentcli/testing` (testing), and the CLI (`cli.js`) that
 * `bin/agentcli.js` runs when the package is installed (Node does not strip types inside
 * node_modules). Dependencies stay external: npm installs them beside the package.
 *
 * @example
 *   npx tsup   # or: npm pack (prepack runs it)
 */
import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "core/index.ts", testing: "bin/testing.ts", cli: "bin/main.ts" },
  outDir: "dist/lib",
  format: ["esm"],
  platform: "node",
  target: "node22",
  splitting: true,
  sourcemap: true,
  clean: true,
  dts: { entry: { index: "core/index.ts", testing: "bin/testing.ts" } },
  tsconfig: "tsconfig.json",
  // The computed import of scripts/build-ui.ts (the UI is prebuilt in the package) and the
  // optional native PostgreSQL driver are never bundled.
  external: ["pg-native"],
  // `node:test` has no unprefixed name: keep every `node:` prefix.
  removeNodeProtocol: false,
  shims: false,
});
