/**
 * `/threads`: create, search, count, get, patch, delete, copy, prune; the state and history
 * routes are thread-state.ts, the thread's record and graph thread-graph.ts.
 */
import { type Context, Hono } from "hono";
import { pick } from "./assistants.ts";
import type { ServerDeps } from "../deps.ts";
import { idTaken, jsonBody, notFound, parseBody } from "../http/errors.ts";
import { agentcliError, SuperstepsNoGraph, ThreadPruneRunInFlight } from "../../kernel/index.ts";
import * as s from "../http/schemas.ts";
import { ownedMetadata, patchMetadata } from "../../engine/index.ts";
import { type AppEnv, scopeOf, userOf } from "../http/auth-middleware.ts";
import { checkMessages } from "../http/limits.ts";
import { getThread, saveThreadState, threadGraph } from "./thread-graph.ts";
import { mountThreadHistory, mountThreadState } from "./thread-state.ts";

export { getThread } from "./thread-graph.ts";

/** Minutes of a thread's `ttl` (a number, or `{ttl, strategy: "delete"}`). */
function ttlMinutes(ttl: number | { ttl: number } | undefined): number | undefined {
  return ttl === undefined ? undefined : typeof ttl === "number" ? ttl : ttl.ttl;
}

/** The threads route group. */
export function threadRoutes(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  mountThreadRecords(app, deps);
  mountThreadState(app, deps);
  mountThreadHistory(app, deps);
  return app;
}

/** The thread records: create (with supersteps), search, count, prune, get, patch, delete, copy. */
function mountThreadRecords(app: Hono<AppEnv>, deps: ServerDeps): void {
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
          checkMessages(u.values, { field: `supersteps[${i}].updates[${j}].values`, limits: deps.limits, chat })
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
        throw agentcliError(SuperstepsNoGraph, { threadId: id });
      }
      let config: Record<string, unknown> = { configurable: { thread_id: id } };
      for (const step of b.supersteps) {
        for (const u of step.updates) config = await graph.updateState(config, u.values, u.as_node);
      }
      await saveThreadState(deps, id, { graph });
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
          throw agentcliError(ThreadPruneRunInFlight, { threadId: id });
        }
        await storage.checkpointer.keepLatest(id);
        pruned++;
      } else if (await deleteThread(deps, { c, id, mustExist: false })) pruned++;
    }
    return c.json({ pruned_count: pruned });
  });

  // Beside LangGraph's fields, `usage`: the totals of the thread's runs' model calls.
  app.get("/:thread_id", async (c) => {
    const t = await getThread(deps, c);
    return c.json(deps.usage ? { ...t, usage: await storage.usage.ofThread(t.thread_id) } : t);
  });

  app.patch("/:thread_id", async (c) => {
    const b = parseBody(s.threadPatch, await jsonBody(c));
    const t = await storage.threads.patch(c.req.param("thread_id"), patchMetadata(b.metadata), {
      scope: scopeOf(c),
      ttlMinutes: ttlMinutes(b.ttl),
    });
    if (!t) throw notFound("Thread", c.req.param("thread_id"));
    return c.json(t);
  });

  app.delete("/:thread_id", async (c) => {
    await deleteThread(deps, { c, id: c.req.param("thread_id"), mustExist: true });
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
}

/**
 * Deletes a thread of the caller: its runs in flight are cancelled, its checkpoints and its
 * sandbox go. An unknown id is a 404 when `mustExist`, else false.
 */
async function deleteThread(
  deps: ServerDeps,
  o: { c: Context<AppEnv>; id: string; mustExist: boolean },
): Promise<boolean> {
  const { c, id, mustExist } = o;
  const t = await deps.storage.threads.get(id, scopeOf(c));
  if (!t) {
    if (mustExist) throw notFound("Thread", id);
    return false;
  }
  await deps.runs.cancelThread(id);
  await deps.storage.threads.delete(id);
  await deps.storage.checkpointer.deleteThread(id);
  await deps.onThreadDeleted?.(id).catch((err) =>
    deps.log.warn(`thread "${id}" was deleted, but not everything of it: ${(err as Error).message}`)
  );
  return true;
}
