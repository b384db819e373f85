/**
 * `/threads`: create, search, count, get, patch, delete, copy, prune, state (get, update,
 * at a checkpoint), history.
 */
import { type Context, Hono } from "hono";
import { isTransientDbError, type Thread } from "../../storage/index.ts";
import { pick } from "./assistants.ts";
import type { ServerDeps } from "../deps.ts";
import { conflict, idTaken, jsonBody, notFound, parseBody, unprocessable } from "../http/errors.ts";
import * as s from "../http/schemas.ts";
import {
  type AppEnv,
  type CompiledGraph,
  graphError,
  interruptsByTask,
  keepsChatMessages,
  ownedMetadata,
  patchMetadata,
  scopeOf,
  stateToWire,
  toWire,
  userOf,
} from "../../engine/index.ts";
import { checkMessages, describeLimit } from "../http/limits.ts";
import { AgentcliError } from "../../kernel/index.ts";

/** Minutes of a thread's `ttl` (a number, or `{ttl, strategy: "delete"}`). */
function ttlMinutes(ttl: number | { ttl: number } | undefined): number | undefined {
  return ttl === undefined ? undefined : typeof ttl === "number" ? ttl : ttl.ttl;
}

/** The thread of the request, visible to its user, or a 404. */
export async function getThread(deps: ServerDeps, c: Context<AppEnv>, id = c.req.param("thread_id")!): Promise<Thread> {
  const t = await deps.storage.threads.get(id, scopeOf(c));
  if (!t) throw notFound("Thread", id);
  return t;
}

/** The graph a thread runs (from its metadata or its latest run), or null when it never ran. */
export async function threadGraph(deps: ServerDeps, t: Thread): Promise<CompiledGraph | null> {
  let graphId = typeof t.metadata.graph_id === "string" ? t.metadata.graph_id : null;
  if (!graphId || !deps.graphs.has(graphId)) {
    const aid = typeof t.metadata.assistant_id === "string" ? t.metadata.assistant_id : null;
    const a = aid ? await deps.storage.assistants.get(aid) : null;
    graphId = a?.graph_id ?? (deps.graphs.ids().length === 1 ? deps.graphs.ids()[0]! : null);
  }
  if (!graphId || !deps.graphs.has(graphId)) return null;
  const configurable: Record<string, unknown> = { thread_id: t.thread_id, graph_id: graphId };
  if (typeof t.metadata.assistant_id === "string") configurable.assistant_id = t.metadata.assistant_id;
  return deps.graphs.get(graphId, { configurable });
}

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

/** The threads route group. */
export function threadRoutes(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { storage } = deps;

  app.post("/", async (c) => {
    const b = parseBody(s.threadCreate, await jsonBody(c));
    if (b.supersteps?.length) {
      const graphId = typeof b.metadata?.graph_id === "string"
        ? b.metadata.graph_id
        : deps.graphs.ids().length === 1
        ? deps.graphs.ids()[0]!
        : null;
      const chat = graphId ? await deps.graphs.readsChatMessages(graphId) : true;
      b.supersteps.forEach((step, i) =>
        step.updates.forEach((u, j) =>
          checkMessages(u.values, `supersteps[${i}].updates[${j}].values`, deps.limits, { chat })
        )
      );
    }
    const id = b.thread_id ?? crypto.randomUUID();
    const metadata = ownedMetadata(userOf(c), b.metadata);
    if (metadata.graph_id === undefined || metadata.graph_id === null) delete metadata.graph_id;
    const created = await storage.threads.create({ thread_id: id, metadata, ttl_minutes: ttlMinutes(b.ttl) });
    if (!created) {
      // Another user's thread is never returned, not even with "do_nothing".
      const existing = b.if_exists === "do_nothing" ? await storage.threads.get(id, scopeOf(c)) : null;
      if (existing) return c.json(existing);
      throw idTaken("thread", id);
    }
    // The embedded engine is this process's alone: the new thread's first read needs no query.
    if (storage.kind === "pglite") storage.checkpointer.markEmpty(id);
    if (b.supersteps?.length) {
      const graph = await threadGraph(deps, created);
      if (!graph) {
        throw conflict(`Cannot apply supersteps to thread "${id}": no graph`, 'Set "graph_id" in the thread metadata.');
      }
      let config: Record<string, unknown> = { configurable: { thread_id: id } };
      for (const step of b.supersteps) {
        for (const u of step.updates) config = await graph.updateState(config, u.values, u.as_node);
      }
      await saveThreadState(deps, id, graph);
      return c.json(await storage.threads.get(id));
    }
    return c.json(created);
  });

  app.post("/search", async (c) => {
    const b = parseBody(s.threadSearch, await jsonBody(c));
    const rows = await storage.threads.search(b, scopeOf(c));
    return c.json(b.select ? rows.map((t) => pick(t, b.select!)) : rows);
  });

  app.post(
    "/count",
    async (c) => c.json(await storage.threads.count(parseBody(s.threadCount, await jsonBody(c)), scopeOf(c))),
  );

  app.post("/prune", async (c) => {
    const b = parseBody(s.threadPrune, await jsonBody(c));
    let pruned = 0;
    for (const id of new Set(b.thread_ids)) {
      if (b.strategy === "keep_latest") {
        // The thread and its current state stay; its older checkpoints go.
        const t = await storage.threads.get(id, scopeOf(c));
        if (!t) continue;
        if ((await storage.runs.inflight(id)).length) {
          throw conflict(
            `Cannot prune thread "${id}": it has a run in progress`,
            "Wait for the run to end, or cancel it.",
          );
        }
        await storage.checkpointer.keepLatest(id);
        pruned++;
      } else if (await deleteThread(deps, c, id, false)) pruned++;
    }
    return c.json({ pruned_count: pruned });
  });

  app.get("/:thread_id", async (c) => c.json(await getThread(deps, c)));

  app.patch("/:thread_id", async (c) => {
    const b = parseBody(s.threadPatch, await jsonBody(c));
    const t = await storage.threads.patch(
      c.req.param("thread_id"),
      patchMetadata(b.metadata),
      scopeOf(c),
      ttlMinutes(b.ttl),
    );
    if (!t) throw notFound("Thread", c.req.param("thread_id"));
    return c.json(t);
  });

  app.delete("/:thread_id", async (c) => {
    await deleteThread(deps, c, c.req.param("thread_id"), true);
    return c.body(null, 204);
  });

  app.post("/:thread_id/copy", async (c) => {
    const t = await getThread(deps, c);
    const id = crypto.randomUUID();
    await storage.threads.create({ thread_id: id, metadata: t.metadata });
    await storage.checkpointer.copyThread(t.thread_id, id);
    await storage.threads.saveState(id, {
      values: t.values,
      interrupts: t.interrupts,
      status: t.status === "busy" ? "idle" : t.status,
      error: t.error,
    });
    return c.json(await storage.threads.get(id));
  });

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
      throw conflict(
        `Cannot read the state of thread "${t.thread_id}": its checkpoint holds a write the graph cannot apply (${
          e.message.split("\n")[0]
        })`,
        "Start a new run on the thread (it goes on from its last complete checkpoint), or read an earlier checkpoint from /threads/{thread_id}/history.",
      );
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
    checkMessages(b.values, "values", deps.limits, { chat: false });
    const t = await getThread(deps, c);
    const graph = await threadGraph(deps, t);
    if (!graph) {
      throw conflict(
        `Cannot update the state of thread "${t.thread_id}": it has no graph yet`,
        "Run the thread once, or create it with a graph_id in its metadata.",
      );
    }
    // Now that the graph is known: each message one LangChain reads, if the graph reads them so.
    if (keepsChatMessages(graph)) checkMessages(b.values, "values", deps.limits);
    const inflight = await storage.runs.inflight(t.thread_id);
    if (inflight.length) {
      throw conflict(
        `Cannot update the state of thread "${t.thread_id}": it has a ${
          inflight.some((r) => r.status === "running") ? "running" : "pending"
        } run`,
        "Wait for the thread's runs to end (join them), or cancel them.",
      );
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
        throw unprocessable(`Cannot update the state of thread "${t.thread_id}": ${e.message}`);
      }
      throw err;
    }
    await saveThreadState(deps, t.thread_id, graph);
    return c.json({ checkpoint: next.configurable });
  });

  app.patch("/:thread_id/state", async (c) => {
    await getThread(deps, c);
    throw conflict(
      "Cannot patch checkpoint metadata: this server keeps checkpoint metadata immutable",
      "Patch the thread's metadata with PATCH /threads/{thread_id}.",
    );
  });

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

  return app;
}

/** Re-reads a thread's latest state and stores it on the thread row. */
export async function saveThreadState(deps: ServerDeps, threadId: string, graph: CompiledGraph): Promise<void> {
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
  const interrupts = interruptsByTask(snapshot);
  await deps.storage.threads.saveState(threadId, {
    values: toWire(snapshot.values ?? {}),
    interrupts,
    status: Object.keys(interrupts).length ? "interrupted" : "idle",
  });
}

async function deleteThread(deps: ServerDeps, c: Context<AppEnv>, id: string, mustExist: boolean): Promise<boolean> {
  const t = await deps.storage.threads.get(id, scopeOf(c));
  if (!t) {
    if (mustExist) throw notFound("Thread", id);
    return false;
  }
  for (const r of await deps.storage.runs.inflight(id)) deps.broker.cancel(r.run_id, "interrupt");
  await deps.storage.threads.delete(id);
  await deps.storage.checkpointer.deleteThread(id);
  await deps.onThreadDeleted?.(id).catch((err) =>
    deps.log.warn(`thread "${id}" was deleted, but not everything of it: ${(err as Error).message}`)
  );
  return true;
}
