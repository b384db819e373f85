/**
 * Runs a fixture project for the browser tests: `agentcli dev --config <fixture> --port <free>`
 * as a child process (what users run). When `AGENTCLI_UI_INPROCESS=1`, or while the `dev`
 * command does not exist yet, the same pieces are composed in this process instead
 * (loadProject -> bundle -> harness -> createAgentServer with the UI at /app).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface RunningAgent {
  url: string;
  /** Output of the dev process (for failure messages). */
  output(): string;
  close(): Promise<void>;
}

export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}/agent.toml`, import.meta.url));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(url: string, child: ChildProcess | null, output: () => string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`agentcli dev exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`agentcli dev did not answer ${url} in time:\n${output()}`);
}

/** Starts the fixture project with `env` (model credentials, identity settings). */
export async function startAgent(fixture: string, env: Record<string, string>): Promise<RunningAgent> {
  const useDev = process.env.AGENTCLI_UI_INPROCESS !== "1" && existsSync(new URL("../../core/cli/dev.ts", import.meta.url));
  return useDev ? startDev(fixture, env) : startInProcess(fixture, env);
}

async function startDev(fixture: string, env: Record<string, string>): Promise<RunningAgent> {
  const port = await freePort();
  let out = "";
  const child = spawn(process.execPath, [...process.execArgv.filter((a) => !a.startsWith("--test")), `${ROOT}/bin/agentcli.js`, "dev", "--config", fixturePath(fixture), "--port", String(port)], {
    cwd: ROOT,
    env: { ...process.env, BROWSER: "none", NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => { out += d.toString(); });
  child.stderr!.on("data", (d: Buffer) => { out += d.toString(); });
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 8000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitFor(`${url}/ok`, child, () => out);
  } catch (err) {
    await close();
    throw err;
  }
  return { url, output: () => out, close };
}

async function startInProcess(fixture: string, env: Record<string, string>): Promise<RunningAgent> {
  const { PluginDriver } = await import("../../core/plugin-driver.ts");
  const { builtinPlugins } = await import("../../plugins/registry.ts");
  const { loadProject } = await import("../../core/config/load.ts");
  const { buildBundle, readBundle } = await import("../../core/bundle/bundle.ts");
  const { createAgentGraph } = await import("../../core/harness/index.ts");
  const { createAgentServer } = await import("../../core/server/app.ts");
  const { openStorage } = await import("../../core/storage/storage.ts");
  const { listen } = await import("../../core/server/node.ts");
  const { silentLog, consoleLog } = await import("../../core/server/log.ts");
  const { createAuthenticator } = await import("../../core/auth/index.ts");
  const { uiRoutes, uiSettings } = await import("../../core/server/ui.ts");
  const driver = new PluginDriver([...builtinPlugins]);
  const fullEnv = { ...process.env, ...env };
  const project = await loadProject(fixturePath(fixture), { driver, env: fullEnv, requireEnv: false });
  const { bytes } = await buildBundle(project, { driver, version: "0.0.0-test" });
  const bundle = await readBundle(bytes);
  const storage = await openStorage({});
  const log = process.env.AGENTCLI_TEST_LOG ? consoleLog("ui-test") : silentLog;
  const graphs: Array<{ close(): Promise<void> }> = [];
  const server = await createAgentServer({
    graphs: {
      agent: async () => {
        const g = await createAgentGraph({ bundle, driver, env: project.env, checkpointer: storage.checkpointer, store: storage.store });
        graphs.push(g);
        return g.graph;
      },
    },
    defaultAssistants: { agent: { name: bundle.config.agent.name } },
    storage,
    log,
    authenticate: createAuthenticator({ driver, config: bundle.config, env: project.env, mode: "serve" }),
    ui: uiRoutes({ settings: uiSettings(bundle.config, project.env), log }),
  });
  const listening = await listen(server, { port: 0, host: "127.0.0.1" });
  return {
    url: `http://127.0.0.1:${listening.port}`,
    output: () => "",
    async close() {
      await listening.close();
      await server.close({ graceMs: 200 });
      await Promise.allSettled(graphs.map((g) => g.close()));
      await storage.close();
    },
  };
}
