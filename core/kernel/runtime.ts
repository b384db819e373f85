/**
 * The one adapter for what differs between Node, Deno and the single executable:
 * embedded assets (WASM, UI files) and the process environment. Code that runs inside a
 * deployment reaches runtime-specific APIs only through here.
 */
import { agentcliError } from "./errors.ts";
import { LangGraphPackageEntryUnprovided } from "./errors/langgraph.ts";

type AssetLoader = (name: string) => Uint8Array | null;

let assetLoader: AssetLoader | null = null;

/** The single-executable entry installs a loader that reads SEA assets. */
export function setAssetLoader(loader: AssetLoader): void {
  assetLoader = loader;
}

/** Returns an asset embedded in the executable, or null when running from sources. */
export function embeddedAsset(name: string): Uint8Array | null {
  return assetLoader ? assetLoader(name) : null;
}

let typeScriptAsEsm = false;

/**
 * Makes `.ts` files outside node_modules whose package.json has no `"type"` load as ES
 * modules, so a `.ts` plugin works without `"type": "module"` (Node otherwise guesses, with a
 * warning that tells users to add it). An explicit `"type"` is respected. Deno needs nothing.
 */
export async function loadTypeScriptAsEsm(): Promise<void> {
  if (typeScriptAsEsm || "Deno" in globalThis) return;
  typeScriptAsEsm = true;
  type Resolved = { url: string; format?: string | null };
  const mod = (await import("node:module")) as {
    registerHooks?: (
      hooks: { resolve: (specifier: string, context: unknown, next: (s: string, c: unknown) => Resolved) => Resolved },
    ) => unknown;
  };
  // Node < 22.15 has no synchronous hooks; it still loads the plugin, with its warning.
  mod.registerHooks?.({
    resolve(specifier, context, next) {
      const resolved = next(specifier, context);
      if (
        !resolved.format && resolved.url.startsWith("file:") && resolved.url.endsWith(".ts") &&
        !resolved.url.includes("/node_modules/")
      ) {
        return { ...resolved, format: "module-typescript" };
      }
      return resolved;
    },
  });
}

/** True inside the single executable. */
export function isCompiled(): boolean {
  return assetLoader !== null;
}

/** A snapshot of the process environment as a plain object. */
export function processEnv(): Record<string, string | undefined> {
  return { ...(globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env };
}

/**
 * The argv that starts this same agentcli (the executable itself, or the runtime plus the
 * entry script when running from sources), for child processes such as the control plane's
 * local listener running `agentcli serve`.
 */
export function selfInvocation(): string[] {
  const proc = (globalThis as { process?: { execPath: string; argv: string[]; execArgv: string[] } }).process!;
  if (isCompiled()) return [proc.execPath];
  // From sources this file is core/kernel/runtime.ts and in the npm package a chunk in
  // dist/lib/: both sit two folders below the root, beside bin/.
  const entry = new URL("../../bin/agentcli.js", import.meta.url).pathname;
  return [proc.execPath, ...proc.execArgv, entry];
}

let wasmBaselineOnly = false;

/**
 * Compiles WebAssembly with V8's baseline compiler only (Liftoff; no optimizing tier-up),
 * before the embedded database's module is compiled. PGlite's start runs enough of Postgres
 * to send hundreds of functions to the optimizing compiler, whose work memory (freed, but kept
 * by the C allocator's per-thread arenas) and code stay resident: about 70-85 MB of an idle
 * server's 330 MB. Its statements run about as fast without (their cost is spread over
 * many functions, not hot loops). `AGENTCLI_MEMORY_TUNING=0` keeps V8's default. Node only
 * (a no-op on Deno); the setting is the process's, read when a module compiles.
 */
export async function preferBaselineWasm(env: Record<string, string | undefined>): Promise<void> {
  if (wasmBaselineOnly || "Deno" in globalThis || env.AGENTCLI_MEMORY_TUNING === "0") return;
  wasmBaselineOnly = true;
  const { setFlagsFromString } = await import("node:v8");
  setFlagsFromString("--liftoff-only");
}

/**
 * The packages agentcli lends a LangGraph.js project that does not install them: LangGraph's
 * own (`@langchain/*`, `langchain`), and `hono` and `zod`, which its graphs, auth and custom
 * routes import. The server runs them already; the project's imports get the same copies.
 */
export function providedPackage(name: string): boolean {
  return name.startsWith("@langchain/") || ["langchain", "hono", "zod"].includes(name);
}

/** The packages of a LangGraph.js project's `dependencies` a deployment cannot give it (not {@link providedPackage}). */
export function unprovidedPackages(lg: { packages?: string[] }): string[] {
  return (lg.packages ?? []).filter((p) => !providedPackage(p));
}

/** The package a bare import names (`@scope/name` or `name`, without a subpath), or null for a path or URL. */
export function packageOfSpecifier(specifier: string): string | null {
  if (/^(\.{0,2}\/|[a-z][a-z0-9+.-]*:)/i.test(specifier)) return null;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/**
 * Where the executable's app bundle registers the packages it lends (specifier -> the bundled
 * module's namespace): a global, read by the modules {@link lentModuleSource} makes.
 */
const LENT = Symbol.for("agentcli.lentModules");
/** The URL scheme of a lent module inside the executable: `agentcli-pkg:@langchain/langgraph/prebuilt`. */
const LENT_SCHEME = "agentcli-pkg:";

/**
 * The single executable's registry of lent packages (scripts/build-sea-packages.ts): a
 * project's import of one of these entry points resolves to the bundled module (the instance
 * the server runs), not to files, which the executable does not have.
 */
export function setProvidedModules(modules: Record<string, object>): void {
  (globalThis as Record<symbol, unknown>)[LENT] = new Map(Object.entries(modules));
}

function lentModules(): Map<string, object> | undefined {
  return (globalThis as Record<symbol, Map<string, object> | undefined>)[LENT];
}

/** An ES module re-exporting, by name, the exports of the lent module `specifier`. */
function lentModuleSource(specifier: string): string {
  const names = Object.keys(lentModules()?.get(specifier) ?? {}).filter((n) => n !== "__esModule");
  return [
    `const m = globalThis[Symbol.for("agentcli.lentModules")].get(${JSON.stringify(specifier)});`,
    ...names.map((n, i) => `const e${i} = m[${JSON.stringify(n)}];`),
    `export { ${names.map((n, i) => `e${i} as ${JSON.stringify(n)}`).join(", ")} };`,
  ].join("\n");
}

/** Where a project's import of a lent package goes when it does not install it: agentcli's files, or inside the executable its bundled module. */
function resolveLent<R>(specifier: string, context: object, next: (s: string, c?: unknown) => R): R {
  const lent = lentModules();
  if (!lent) return next(specifier, { ...context, parentURL: import.meta.url });
  if (lent.has(specifier)) return { url: `${LENT_SCHEME}${specifier}`, format: "module", shortCircuit: true } as R;
  const pkg = packageOfSpecifier(specifier);
  throw agentcliError(LangGraphPackageEntryUnprovided, {
    specifier,
    lent: [...lent.keys()].filter((s) => packageOfSpecifier(s) === pkg),
  });
}

/** Turns a TypeScript source into JavaScript (`file` names it, for `.tsx` and messages). */
export type TranspileSource = (source: string, file: string) => string;

const sourceRoots = new Set<string>();
let sourceHooks = false;
let sourceGeneration = 0;

/**
 * Makes the next imports of the modules under the roots of {@link loadTypeScriptUnder} load
 * them anew from their files (dev's reload after a change): their URLs get a new generation,
 * so Node's module cache misses. Packages (node_modules) stay as loaded. The modules of earlier
 * generations stay in memory until the process ends.
 */
export function renewSourceModules(): void {
  sourceGeneration++;
}

/**
 * Loads the TypeScript files under `root` (outside node_modules) as LangGraph's loader does,
 * not with Node's type stripping: each is transpiled by `transpile`, which drops imports used
 * only as types (Node keeps `import { T }` of a type and the module then fails to link), and a
 * relative import may name `./x.js` for `./x.ts` or leave the extension out, and a package of
 * {@link providedPackage} the project does not install resolves to agentcli's. Registered once
 * per process (Node 22.15+'s synchronous module hooks, in this thread: the executable's bundled
 * transpiler serves); each call adds a root. Deno transpiles TypeScript itself: a no-op there.
 */
export async function loadTypeScriptUnder(root: string, transpile: TranspileSource): Promise<void> {
  if ("Deno" in globalThis) return;
  const { pathToFileURL } = await import("node:url");
  const { readFileSync } = await import("node:fs");
  sourceRoots.add(pathToFileURL(root.endsWith("/") ? root : `${root}/`).href);
  if (sourceHooks) return;
  sourceHooks = true;
  type Next<C, R> = (s: string, c?: C) => R;
  type Resolved = { url: string; format?: string | null };
  type Loaded = { format?: string | null; source?: string | Uint8Array | null };
  const ours = (url: string) =>
    url.startsWith("file:") && !url.includes("/node_modules/") && [...sourceRoots].some((r) => url.startsWith(r));
  const typeScript = /\.(ts|mts|tsx)$/;
  const mod = (await import("node:module")) as {
    registerHooks?: (hooks: {
      resolve: (specifier: string, context: { parentURL?: string }, next: Next<unknown, Resolved>) => Resolved;
      load: (url: string, context: unknown, next: Next<unknown, Loaded>) => Loaded;
    }) => unknown;
  };
  const resolveSource = (specifier: string, context: { parentURL?: string }, next: Next<unknown, Resolved>) => {
    try {
      return next(specifier, context);
    } catch (err) {
      const parent = context.parentURL;
      if (!parent || !ours(parent)) throw err;
      // A package the project does not install (a deployment has no node_modules): agentcli's own copy.
      const pkg = packageOfSpecifier(specifier);
      if (pkg !== null) {
        if (!providedPackage(pkg)) throw err;
        return resolveLent(specifier, context, next);
      }
      if (!/^\.{1,2}\//.test(specifier)) throw err;
      const base = specifier.replace(/\.(m?)js$/, "").replace(/\.jsx$/, "");
      for (const candidate of [`${base}.ts`, `${base}.tsx`, `${base}.mts`, `${base}/index.ts`]) {
        try {
          return next(candidate, context);
        } catch { /* the next candidate */ }
      }
      throw err;
    }
  };
  mod.registerHooks?.({
    resolve(specifier, context, next) {
      const resolved = resolveSource(specifier, context, next);
      const url = resolved.url.split(/[?#]/)[0]!;
      return sourceGeneration && ours(url)
        ? { ...resolved, url: `${url}?agentcli-generation=${sourceGeneration}` }
        : resolved;
    },
    load(url, context, next) {
      if (url.startsWith(LENT_SCHEME)) {
        return {
          format: "module",
          source: lentModuleSource(url.slice(LENT_SCHEME.length)),
          shortCircuit: true,
        } as Loaded;
      }
      const path = url.split(/[?#]/)[0]!;
      if (!ours(path) || !typeScript.test(path)) return next(url, context);
      const file = decodeURIComponent(new URL(path).pathname);
      return { format: "module", source: transpile(readFileSync(file, "utf8"), file), shortCircuit: true } as Loaded;
    },
  });
}
