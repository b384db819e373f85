/**
 * The one adapter for what differs between Node, Deno and the single executable:
 * embedded assets (WASM, UI files) and the process environment. Code that runs inside a
 * deployment reaches runtime-specific APIs only through here.
 */

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
  const entry = new URL("../bin/agentcli.js", import.meta.url).pathname;
  return [proc.execPath, ...proc.execArgv, entry];
}
