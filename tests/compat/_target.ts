/**
 * The server the compatibility suite drives: ours (default: the agent server on the compat
 * fixture graphs, through the server test harness), or, with `AGENTCLI_COMPAT_PEER=1`
 * (`npm run test:compat -- --peer`), LangGraph's own `@langchain/langgraph-cli dev` on the
 * same graph files, from a `langgraph.json` written to a temporary directory. Every test
 * runs unchanged against both, so each expectation is LangGraph's behaviour, not a guess.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../../plugins/compute/revision-process.ts";
import { startTestServer } from "../server/_harness.ts";

const GRAPH_DIR = resolve(import.meta.dirname, "../fixtures/graphs/compat");

/** The compat graphs by id, as `langgraph.json` names them (`<file>:<export>`). */
export const COMPAT_GRAPHS: Record<string, string> = {
  chain: "chain.ts:graph",
  loop: "loop.ts:graph",
  hitl: "hitl.ts:graph",
  parent: "parent.ts:graph",
  tools: "tools.ts:graph",
  typed: "typed.ts:graph",
  factory: "factory.ts:graph",
  factory_modes: "factory-modes.ts:graph",
  context: "context.ts:graph",
  uncompiled: "uncompiled.ts:graph",
  chat: "chat.ts:graph",
};

export const PEER = process.env.AGENTCLI_COMPAT_PEER === "1";

export interface Target {
  /** "ours" or "peer". */
  name: "ours" | "peer";
  url: string;
  client: Client;
  close(): Promise<void>;
}

/** What a suite may add to the server under test: LangGraph custom auth (`auth` of langgraph.json). */
export interface TargetOptions {
  auth?: { module: string; exportName: string; disableStudioAuth?: boolean };
}

/** Starts the server under test. */
export async function startTarget(o: TargetOptions = {}): Promise<Target> {
  return PEER ? startPeer(o) : startOurs(o);
}

async function startOurs(o: TargetOptions): Promise<Target> {
  const graphs = Object.fromEntries(
    Object.entries(COMPAT_GRAPHS).map(([id, spec]) => {
      const [file, name] = spec.split(":") as [string, string];
      return [id, async () => (await import(join(GRAPH_DIR, file)))[name]];
    }),
  );
  const t = await startTestServer({
    graphs,
    ...(o.auth
      ? {
        langgraphAuth: {
          module: o.auth.module,
          exportName: o.auth.exportName,
          studioBypass: !o.auth.disableStudioAuth,
        },
      }
      : {}),
  });
  return { name: "ours", url: t.url, client: t.client, close: () => t.close() };
}

/** The `auth` key of the peer's langgraph.json. */
function authConfig(dir: string, o: TargetOptions): { auth?: Record<string, unknown> } {
  if (!o.auth) return {};
  const path = `./${relative(dir, o.auth.module)}:${o.auth.exportName}`;
  return { auth: { path, ...(o.auth.disableStudioAuth ? { disable_studio_auth: true } : {}) } };
}

/** LangGraph's own `langgraphjs dev` on a port of loopback, without a browser or reloads: the command and its arguments. */
export function peerDevCommand(port: number): string[] {
  return [
    resolve(import.meta.dirname, "../../node_modules/.bin/langgraphjs"),
    "dev",
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--no-browser",
    "--no-reload",
  ];
}

async function startPeer(o: TargetOptions): Promise<Target> {
  const dir = await mkdtemp(join(tmpdir(), "agentcli-compat-peer-"));
  // The peer resolves graph paths against the config's directory: relative paths only.
  const graphs = Object.fromEntries(
    Object.entries(COMPAT_GRAPHS).map(([id, spec]) => [id, `./${relative(dir, join(GRAPH_DIR, spec))}`]),
  );
  await writeFile(
    join(dir, "langgraph.json"),
    JSON.stringify({ node_version: "22", graphs, dependencies: ["."], ...authConfig(dir, o) }, null, 2),
  );
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "compat-peer", private: true, type: "module" }));
  const port = await freePort("127.0.0.1");
  const [bin, ...args] = peerDevCommand(port);
  const child: ChildProcess = spawn(bin!, [...args, "--config", join(dir, "langgraph.json")], {
    cwd: dir,
    env: {
      ...process.env,
      LANGGRAPH_CLI_NO_ANALYTICS: "1",
      BROWSER: "none",
      LANGSMITH_TRACING: "false",
      PATH: `${resolve(import.meta.dirname, "../../node_modules/.bin")}:${process.env.PATH}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (d) => (output += String(d)));
  child.stderr?.on("data", (d) => (output += String(d)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      const exited = new Promise((r) => child.once("exit", r));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch { /* gone */ }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch { /* gone */ }
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  // The peer compiles the graphs with its own loader first: give it time, no wall-clock assertion.
  for (let i = 0;; i++) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`langgraph-cli dev exited (${child.exitCode}):\n${output}`);
    }
    try {
      // `/info` answers without auth (custom auth guards even `/ok` there).
      if ((await fetch(`${url}/info`)).ok) break;
    } catch { /* not yet */ }
    if (i > 1200) {
      await stop();
      throw new Error(`langgraph-cli dev did not answer /info:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  if (process.env.AGENTCLI_COMPAT_PEER_LOG) child.stdout?.pipe(process.stderr);
  return {
    name: "peer",
    url,
    client: new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } }),
    close: stop,
  };
}
