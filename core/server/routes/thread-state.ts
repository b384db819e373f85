/**
 * `/threads/{thread_id}/state` (read now, at a checkpoint, update; checkpoint metadata is
 * immutable) and `/threads/{thread_id}/history`, bounded by bytes as well as by count.
 */
import type { Context, Hono } from "hono";
import { pick } from "./assistants.ts";
import type { ServerDeps } from "../deps.ts";
import { jsonBody, notFound, parseBody } from "../http/errors.ts";
import * as s from "../http/schemas.ts";
import { checkMessages, describeLimit } from "../http/limits.ts";
import { graphError, keepsChatMessages, stateToWire } from "../../engine/index.ts";
import type { AppEnv } from "../http/auth-middleware.ts";
import { isTransientDbError } from "../../storage/index.ts";
import {
  AgentcliError,
  agentcliError,
  CheckpointMetadataImmutable,
  ThreadStateNoGraph,
  ThreadStateRunInFlight,
  ThreadStateUnreadable,
  ThreadStateUpdateRefused,
} from "../../kernel/index.ts";
import { getThread, saveThreadState, threadGraph } from "./thread-graph.ts";

const EMPTY_STATE = (threadId: string) => ({
  values: {},
  next: [],
  tasks: [],
  checkpoint: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: null, checkpoint_map: null },
  metadata: {},
  created_at: null,
  parent_checkpoint: null,
  interrupts: [],
});

/** The state routes of a thread: read (now, at a checkpoint), update, and the refused metadata patch. */
export function mountThreadState(app: Hono<AppEnv>, deps: ServerDeps): void {
  const { storage } = deps;
  const readState = async (c: Context<AppEnv>, checkpoint: Record<string, unknown> | null, subgraphs: boolean) => {
    const t = await getThread(deps, c);
    const graph = await threadGraph(deps, t);
    if (!graph) return EMPTY_STATE(t.thread_id);
    const configurable: Record<string, unknown> = { thread_id: t.thread_id };
    if (checkpoint?.checkpoint_id) configurable.checkpoint_id = checkpoint.checkpoint_id;
    if (checkpoint?.checkpoint_ns) configurable.checkpoint_ns = checkpoint.checkpoint_ns;
    const snapshot = await graph.getState({ configurable }, { subgraphs }).catch((err: unknown) => {
      if (isTransientDbError(err) || err instanceof AgentcliError) throw err;
      // A write the graph's reducers refuse (a node returned a value its state cannot hold): the thread's data, not a server fault.
      const e = graphError(err);
      throw agentcliError(ThreadStateUnreadable, { threadId: t.thread_id, reason: e.message.split("\n")[0]! });
    });
    // A checkpoint that does not exist reads as an empty snapshot (no creation time).
    if (checkpoint?.checkpoint_id && (!snapshot.createdAt || !snapshot.config?.configurable?.checkpoint_id)) {
      throw notFound("Checkpoint", String(checkpoint.checkpoint_id));
    }
    return stateToWire(snapshot);
  };

  app.get("/:thread_id/state", async (c) => c.json(await readState(c, null, c.req.query("subgraphs") === "true")));
  app.get(
    "/:thread_id/state/:checkpoint_id",
    async (c) =>
      c.json(await readState(c, { checkpoint_id: c.req.param("checkpoint_id") }, c.req.query("subgraphs") === "true")),
  );
  app.post("/:thread_id/state/checkpoint", async (c) => {
    const b = parseBody(s.stateAtCheckpoint, await jsonBody(c));
    return c.json(await readState(c, b.checkpoint, Boolean(b.subgraphs)));
  });

  app.post("/:thread_id/state", async (c) => {
    const b = parseBody(s.stateUpdate, await jsonBody(c));
    checkMessages(b.values, { field: "values", limits: deps.limits, chat: false });
    const t = await getThread(deps, c);
    const graph = await threadGraph(deps, t);
    if (!graph) {
      throw agentcliError(ThreadStateNoGraph, { threadId: t.thread_id });
    }
    // Now that the graph is known: each message one LangChain reads, if the graph reads them so.
    if (keepsChatMessages(graph)) checkMessages(b.values, { field: "values", limits: deps.limits });
    const inflight = await storage.runs.inflight(t.thread_id);
    if (inflight.length) {
      const status = inflight.some((r) => r.status === "running") ? "running" : "pending";
      throw agentcliError(ThreadStateRunInFlight, { threadId: t.thread_id, status });
    }
    const configurable: Record<string, unknown> = { thread_id: t.thread_id };
    const cp = b.checkpoint_id ?? b.checkpoint?.checkpoint_id;
    if (cp) configurable.checkpoint_id = cp;
    if (b.checkpoint?.checkpoint_ns) configurable.checkpoint_ns = b.checkpoint.checkpoint_ns;
    if (cp && !(await storage.checkpointer.getTuple({ configurable: { checkpoint_ns: "", ...configurable } }))) {
      throw notFound("Checkpoint", String(cp));
    }
    let next;
    try {
      next = await graph.updateState({ configurable }, b.values, b.as_node);
    } catch (err) {
      // The graph refuses the update (values that are not its state, an unknown as_node): the client's mistake.
      const e = graphError(err);
      if (e.error === "InvalidUpdateError" || /does not exist|Ambiguous update/i.test(e.message)) {
        throw agentcliError(ThreadStateUpdateRefused, { threadId: t.thread_id, reason: e.message });
      }
      throw err;
    }
    await saveThreadState(deps, t.thread_id, { graph, prior: t.status });
    return c.json({ checkpoint: next.configurable });
  });

  app.patch("/:thread_id/state", async (c) => {
    await getThread(deps, c);
    throw agentcliError(CheckpointMetadataImmutable, {});
  });
}

/** The history of a thread's states, newest first, by POST (filters in the body) or GET (limit, before). */
export function mountThreadHistory(app: Hono<AppEnv>, deps: ServerDeps): void {
  const history = async (c: Context<AppEnv>, body: unknown) => {
    const b = parseBody(s.history, body);
    const t = await getThread(deps, c);
    const graph = await threadGraph(deps, t);
    if (!graph) return [];
    const configurable: Record<string, unknown> = {
      thread_id: t.thread_id,
      checkpoint_ns: b.checkpoint?.checkpoint_ns ?? "",
    };
    if (b.checkpoint?.checkpoint_id) configurable.checkpoint_id = b.checkpoint.checkpoint_id;
    const before = typeof b.before === "string"
      ? { configurable: { checkpoint_id: b.before } }
      : b.before && "configurable" in b.before
      ? b.before
      : b.before
      ? { configurable: b.before }
      : undefined;
    // Bounded by bytes as well as by `limit`: past maxHistoryBytes the answer stops (always
    // with at least one state) and says where to continue (`before` the last one returned).
    const out: unknown[] = [];
    let bytes = 0;
    let lastId: string | null = null;
    for await (const st of graph.getStateHistory({ configurable }, { limit: b.limit, before, filter: b.metadata })) {
      const wire = stateToWire(st);
      bytes += JSON.stringify(wire).length;
      if (out.length > 0 && bytes > deps.limits.maxHistoryBytes) {
        if (lastId) c.header("X-Pagination-Next", lastId);
        c.header(
          "X-Pagination-Truncated",
          `the answer reached ${
            describeLimit("maxHistoryBytes", deps.limits.maxHistoryBytes)
          } (AGENTCLI_MAX_HISTORY_MB); ask again with before = X-Pagination-Next`,
        );
        break;
      }
      out.push(b.select ? pick(wire, b.select) : wire);
      lastId = (wire.checkpoint as { checkpoint_id?: string } | null)?.checkpoint_id ?? null;
    }
    return out;
  };
  app.post("/:thread_id/history", async (c) => c.json(await history(c, await jsonBody(c))));
  app.get(
    "/:thread_id/history",
    async (c) => c.json(await history(c, { limit: c.req.query("limit"), before: c.req.query("before") })),
  );
}
