/**
 * The server the compatibility suite drives: ours (default: the agent server on the compat
 * fixture graphs, through the server test harness), or, with `AGENTCLI_COMPAT_PEER=1`
 * (`npm run test:compat -- --peer`), LangGraph's own `@langchain/langgraph-cli dev` on the
 * same graph files, from a `langgraph.json` written to a temporary directory. Every test
 * runs unchanged against both, so each expectation is LangGraph's behaviour, not a guess.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { peerDevCommand, startDevProcess } from "../fixtures/dev-process.ts";
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
  // The peer compiles the graphs with its own loader first: startDevProcess gives it time.
  const peer = await startDevProcess({
    argv: (port) => [...peerDevCommand(port), "--config", join(dir, "langgraph.json")],
    cwd: dir,
    env: {
      ...process.env,
      LANGGRAPH_CLI_NO_ANALYTICS: "1",
      BROWSER: "none",
      LANGSMITH_TRACING: "false",
      PATH: `${resolve(import.meta.dirname, "../../node_modules/.bin")}:${process.env.PATH}`,
    },
    // `/info` answers without auth (custom auth guards even `/ok` there).
    ready: "/info",
    group: true,
    onStop: () => rm(dir, { recursive: true, force: true }),
  });
  const { url } = peer;
  if (process.env.AGENTCLI_COMPAT_PEER_LOG) peer.child.stdout?.pipe(process.stderr);
  return {
    name: "peer",
    url,
    client: new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } }),
    close: peer.stop,
  };
}
