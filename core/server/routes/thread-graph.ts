/**
 * A thread as the route groups of `/threads` (and runs, crons) read it: its record, visible to
 * the caller, and the graph it runs; and its state saved back on the record after a change.
 *
 * @example
 * const t = await getThread(deps, c);            // 404 unless the caller's
 * const graph = await threadGraph(deps, t);      // null when it never ran
 */
import type { Context } from "hono";
import type { Thread } from "../../storage/index.ts";
import type { ServerDeps } from "../deps.ts";
import { notFound } from "../http/errors.ts";
import { type CompiledGraph, interruptsByTask, toWire } from "../../engine/index.ts";
import { type AppEnv, scopeOf } from "../http/auth-middleware.ts";

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
  // As LangGraph's server: a factory is rebuilt with the thread's config, its latest run's (and its assistant's).
  const [last] = await deps.storage.runs.list(t.thread_id, { limit: 1, offset: 0 });
  const runConfig = (last?.kwargs as { config?: { configurable?: Record<string, unknown> } } | undefined)?.config;
  const assistant = last ? await deps.storage.assistants.get(last.assistant_id) : null;
  const configurable: Record<string, unknown> = {
    ...(assistant?.config as { configurable?: Record<string, unknown> } | undefined)?.configurable,
    ...runConfig?.configurable,
    thread_id: t.thread_id,
    graph_id: graphId,
  };
  if (typeof t.metadata.assistant_id === "string") configurable.assistant_id = t.metadata.assistant_id;
  return deps.graphs.get(graphId, { configurable });
}

/**
 * Re-reads a thread's latest state and stores it on the thread row. An `interrupted` thread
 * (`prior`) whose graph still has steps to run stays `interrupted`, as on LangGraph's server
 * (a state update does not change a thread's status there).
 */
export async function saveThreadState(
  deps: ServerDeps,
  threadId: string,
  o: { graph: CompiledGraph; prior?: string },
): Promise<void> {
  const snapshot = await o.graph.getState({ configurable: { thread_id: threadId } });
  const interrupts = interruptsByTask(snapshot);
  const waiting = o.prior === "interrupted" && (snapshot.next ?? []).length > 0;
  await deps.storage.threads.saveState(threadId, {
    values: toWire(snapshot.values ?? {}),
    interrupts,
    status: Object.keys(interrupts).length || waiting ? "interrupted" : "idle",
  });
}
