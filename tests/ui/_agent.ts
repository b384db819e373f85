/**
 * Runs a fixture project for the browser tests exactly as a user does:
 * `agentcli dev --config <copy of the fixture>/agent.toml --port <free>` as a child process.
 * Each start works on a fresh copy of the fixture in a temporary folder, so its data
 * (`.agentcli/`) starts empty and never leaks between runs or into the repository.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { freePort } from "../../plugins/compute/revision-process.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Variables a developer's shell may carry that would change what a fixture does. */
const SCRUBBED = [
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "ANTHROPIC_API_KEY",
  "GOOGLE_API_KEY",
  "GOOGLE_CLOUD_PROJECT",
  "NVIDIA_API_KEY",
  "IDENTITY_A_URL",
  "IDENTITY_A_PUBLISHABLE_DEFAULT_KEY",
  "IDENTITY_B_SECRET_KEY",
  "IDENTITY_B_PUBLISHABLE_KEY",
  "IDENTITY_B_JS_URL",
  "IDENTITY_B_API_URL",
  "IDENTITY_B_JWKS_URL",
  "AGENTCLI_DEV_AUTH_BYPASS",
  "DATABASE_URL",
  "REDIS_URL",
];

export interface RunningAgent {
  /** `http://127.0.0.1:<port>`: the Agent API; the UI is at `${url}/app`. */
  url: string;
  /** The dev process's pid. */
  pid: number;
  /** Output of the dev process (for failure messages). */
  output(): string;
  close(): Promise<void>;
}

export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}/`, import.meta.url));
}

async function waitFor(url: string, child: ChildProcess, output: () => string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`agentcli dev exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`agentcli dev did not answer ${url} in time:\n${output()}`);
}

/**
 * Starts `agentcli dev` on a copy of `tests/ui/fixtures/<fixture>` with `env` (model
 * credentials, identity settings). `env` may be a function of the agent's URL (for settings
 * that name the app's own origin).
 */
export async function startAgent(
  fixture: string,
  env: Record<string, string> | ((url: string) => Record<string, string>),
  args: string[] = [],
): Promise<RunningAgent> {
  const port = await freePort("127.0.0.1");
  const url = `http://127.0.0.1:${port}`;
  const dir = await mkdtemp(join(tmpdir(), `agentcli-ui-${fixture}-`));
  await cp(fixturePath(fixture), dir, { recursive: true, filter: (src) => !src.includes("/.agentcli") });
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !SCRUBBED.includes(k)) base[k] = v;
  let out = "";
  const child = spawn(process.execPath, [
    `${ROOT}/bin/agentcli.js`,
    "dev",
    "--config",
    join(dir, "agent.toml"),
    "--port",
    String(port),
    ...args,
  ], {
    cwd: dir,
    env: { ...base, BROWSER: "none", NO_COLOR: "1", ...(typeof env === "function" ? env(url) : env) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 8000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(`${url}/ok`, child, () => out);
  } catch (err) {
    await close();
    throw err;
  }
  return { url, pid: child.pid!, output: () => out, close };
}
