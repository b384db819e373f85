/**
 * Runs a fixture project for the browser tests exactly as a user does:
 * `agentcli dev --config <copy of the fixture>/agent.toml --port <free>` as a child process,
 * used once the child itself says it serves that port (tests/_spawn-serving.ts).
 * Each start works on a fresh copy of the fixture in a temporary folder, so its data
 * (`.agentcli/`) starts empty and never leaks between runs or into the repository.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SERVING, type Serving, spawnServing } from "../_spawn-serving.ts";
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

/**
 * Starts `agentcli dev` on a copy of `tests/ui/fixtures/<fixture>` with `env` (model
 * credentials, identity settings). `env` may be a function of the agent's URL (for settings
 * that name the app's own origin). The port is picked before dev starts (so `env` can name
 * it); when another listener takes it first, dev says so and exits, and it starts again on
 * another.
 */
export async function startAgent(
  fixture: string,
  env: Record<string, string> | ((url: string) => Record<string, string>),
  args: string[] = [],
): Promise<RunningAgent> {
  const dir = await mkdtemp(join(tmpdir(), `agentcli-ui-${fixture}-`));
  await cp(fixturePath(fixture), dir, { recursive: true, filter: (src) => !src.includes("/.agentcli") });
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !SCRUBBED.includes(k)) base[k] = v;
  let agent: Serving;
  try {
    agent = await spawnServing({
      serving: SERVING.dev,
      start: (port) => {
        const url = `http://127.0.0.1:${port}`;
        return spawnDev({ dir, port, args, env: { ...base, ...(typeof env === "function" ? env(url) : env) } });
      },
    });
    if (!(await fetch(`${agent.url}/ok`).then((r) => r.ok, () => false))) {
      await agent.stop();
      throw new Error(`${agent.url}/ok did not answer`);
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: agent.url,
    pid: agent.child.pid!,
    output: agent.output,
    close: async () => {
      await agent.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function spawnDev(opts: { dir: string; port: number; args: string[]; env: Record<string, string> }): ChildProcess {
  return spawn(process.execPath, [
    `${ROOT}/bin/agentcli.js`,
    "dev",
    "--config",
    join(opts.dir, "agent.toml"),
    "--port",
    String(opts.port),
    ...opts.args,
  ], {
    cwd: opts.dir,
    env: { ...opts.env, BROWSER: "none", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}
