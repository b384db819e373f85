/**
 * Builds the browser chat UI (`ui/`, React + Vite) once into `dist/ui/`, the studio
 * (`ui/studio/`, served at `/studio`) into `dist/ui/studio/`, with the API
 * reference the server serves at `/docs` (`ui/public/docs/` plus Swagger UI's prebuilt bundle
 * from `swagger-ui-dist`, copied into `dist/ui/docs/`: nothing loaded from a CDN), and writes
 * `dist/ui/manifest.json` listing every file, so the single-executable build can embed
 * each one as the asset `ui/<path>`.
 *
 * @example
 *   npx node scripts/build-ui.ts            # -> dist/ui/
 *   import { buildUi } from "./scripts/build-ui.ts"; await buildUi();
 */
import { copyFile, readdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { dirname, join, relative, sep } from "node:path";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Where the built UI lands: `dist/ui/` at the repository root. */
export const UI_DIST_DIR = join(ROOT, "dist", "ui");

/** The list of built files, relative to `dist/ui/`, written as `manifest.json`. */
export interface UiManifest {
  files: string[];
}

/** Runs Vite on `ui/` and writes `dist/ui/` plus its manifest; returns the manifest. */
export async function buildUi(opts: { outDir?: string; quiet?: boolean } = {}): Promise<UiManifest> {
  const outDir = opts.outDir ?? UI_DIST_DIR;
  const { build } = await import("vite");
  const { default: react } = await import("@vitejs/plugin-react");
  await rm(outDir, { recursive: true, force: true });
  await build({
    configFile: false,
    root: join(ROOT, "ui"),
    base: "/app/",
    logLevel: opts.quiet ? "warn" : "info",
    plugins: [react()],
    build: {
      outDir,
      emptyOutDir: true,
      assetsDir: "assets",
      sourcemap: false,
      chunkSizeWarningLimit: 1500,
    },
  });
  await build({
    configFile: false,
    root: join(ROOT, "ui", "studio"),
    base: "/studio/",
    logLevel: opts.quiet ? "warn" : "info",
    plugins: [react()],
    publicDir: false,
    build: {
      outDir: join(outDir, "studio"),
      emptyOutDir: true,
      assetsDir: "assets",
      sourcemap: false,
      chunkSizeWarningLimit: 1500,
    },
  });
  await copySwaggerUi(join(outDir, "docs"));
  const files = (await listFiles(outDir)).filter((f) => f !== "manifest.json").sort();
  const manifest: UiManifest = { files };
  await writeFile(join(outDir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}

/** Swagger UI's browser bundle and stylesheet (the only files of `swagger-ui-dist` the page loads). */
async function copySwaggerUi(docsDir: string): Promise<void> {
  const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  for (const name of ["swagger-ui-bundle.js", "swagger-ui.css"]) await copyFile(join(dist, name), join(docsDir, name));
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    out.push(relative(dir, join(entry.parentPath, entry.name)).split(sep).join("/"));
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1] === fileURLToPath(import.meta.url)) {
  const manifest = await buildUi();
  process.stdout.write(
    `built the chat UI and the studio: ${manifest.files.length} files in ${
      relative(process.cwd(), UI_DIST_DIR) || "."
    }\n`,
  );
}
