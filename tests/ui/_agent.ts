/**
 * Runs a fixture project for the browser tests exactly as a user does:
 * `agentcli dev --config <copy of the fixture>/agent.toml --port <free>` as a child process,
 * used once the child itself says it serves that port.
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

/** What dev says when another listener holds the port it was given. */
const PORT_TAKEN = /Cannot listen on \S+: the port is in use/;
/**
 * dev's banner, printed once it serves, with the API's URL (`[redacted]` if a variable named like
 * a secret holds that URL: IDENTITY_B_AUTHORIZED_PARTIES did, before AUTH counted only as a word).
 */
const RUNNING = /^agentcli dev: ".*" is running\n\s*API:\s+(\S+)/m;

/**
 * Resolves "up" when the child itself says it serves: dev binds the port it is given or exits
 * (it never falls back to another), and a port has one listener, so what answers at `url` is
 * this child, not a server of another test (or of another run on the machine) that took the
 * port between `freePort` and dev's bind. Resolves "taken" when dev reports the port in use;
 * rejects when it exits otherwise. `/ok` answering alone proves only that *some* server holds
 * the port (the failure once seen in identity-b: another run's dev answered).
 */
function servedByChild(url: string, child: ChildProcess, output: () => string): Promise<"up" | "taken"> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const api = RUNNING.exec(output())?.[1];
      if (api === url || api === "[redacted]") done(() => resolve("up"));
      else if (api) done(() => reject(new Error(`agentcli dev serves ${api}, not ${url}:\n${output()}`)));
    };
    const exited = (code: number | null, signal: string | null) =>
      done(() =>
        PORT_TAKEN.test(output())
          ? resolve("taken")
          : reject(new Error(`agentcli dev exited with ${code ?? signal} before serving ${url}:\n${output()}`))
      );
    const done = (settle: () => void) => {
      child.stdout!.off("data", check);
      child.off("close", exited);
      settle();
    };
    child.stdout!.on("data", check);
    // "close", not "exit": by then all of its output is read (the port error comes last).
    child.once("close", exited);
    check();
  });
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
  for (let attempt = 1;; attempt++) {
    const url = `http://127.0.0.1:${await freePort("127.0.0.1")}`;
    const agent = spawnDev({ dir, url, args, env: { ...base, ...(typeof env === "function" ? env(url) : env) } });
    let served: "up" | "taken";
    try {
      served = await servedByChild(url, agent.child, agent.output);
      if (served === "up" && !(await fetch(`${url}/ok`)).ok) throw new Error(`${url}/ok did not answer`);
    } catch (err) {
      await agent.stop();
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    if (served === "up") {
      return {
        url,
        pid: agent.child.pid!,
        output: agent.output,
        close: async () => {
          await agent.stop();
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    if (attempt === 5) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`agentcli dev found its port taken ${attempt} times:\n${agent.output()}`);
    }
  }
}

function spawnDev(opts: { dir: string; url: string; args: string[]; env: Record<string, string> }) {
  let out = "";
  const child = spawn(process.execPath, [
    `${ROOT}/bin/agentcli.js`,
    "dev",
    "--config",
    join(opts.dir, "agent.toml"),
    "--port",
    new URL(opts.url).port,
    ...opts.args,
  ], {
    cwd: opts.dir,
    env: { ...opts.env, BROWSER: "none", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 8000);
      await exited;
      clearTimeout(timer);
    }
  };
  return { child, output: () => out, stop };
}
