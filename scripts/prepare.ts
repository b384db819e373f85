/**
 * `npm ci`'s `prepare` step in a checkout: builds the chat UI into `dist/ui/` (the server never
 * builds it) and links `node_modules/.bin/agentcli` to `bin/agentcli.js`, which npm does not
 * do for the root package's own `bin`, so `agentcli` is on PATH in npm scripts and `npx -c`.
 * (`npx agentcli` itself always resolves the root package's bin, through npm's npx cache.)
 */
import { lstatSync, mkdirSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { buildUi } from "./build-ui.ts";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "node_modules/.bin");
mkdirSync(bin, { recursive: true });
try {
  lstatSync(join(bin, "agentcli"));
  unlinkSync(join(bin, "agentcli"));
} catch { /* not linked yet */ }
symlinkSync("../../bin/agentcli.js", join(bin, "agentcli"));
const { files } = await buildUi({ quiet: true });
process.stdout.write(
  `prepare: built the chat UI (${files.length} files in dist/ui/), linked node_modules/.bin/agentcli\n`,
);
