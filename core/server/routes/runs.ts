/**
 * `/threads/{thread_id}/runs` and `/runs`: create (background), stream, wait, batch, list,
 * get, its trace, delete, join, join-stream (`Last-Event-ID`), cancel (one or many), and the stateless
 * forms on a temporary thread. The routes parse the request and answer; the run service
 * (`deps.runs`) creates, cancels and follows the runs.
 */
import { type Context, Hono } from "hono";
import type { Run, RunStatus } from "../../storage/index.ts";
import {
  AgentcliError,
  agentcliError,
  QueryNotInRange,
  RunBatchNotArray,
  RunNotFinished,
  RunStatusUnknown,
} from "../../kernel/index.ts";
import { resolveAssistant, type ServerDeps } from "../deps.ts";
import { jsonBody, notFound, parseBody } from "../http/errors.ts";
import * as s from "../http/schemas.ts";
import { type AppEnv, scopeOf, userOf } from "../http/auth-middleware.ts";
import { requestClient } from "../http/client.ts";
import { lastEventId, sseResponse } from "../http/sse.ts";
import { getThread } from "./threads.ts";

const FINAL: RunStatus[] = ["success", "error", "timeout", "interrupted"];
const RUN_STATUSES: RunStatus[] = ["pending", "running", ...FINAL];

function runPath(run: Run): string {
  return `/threads/${run.thread_id}/runs/${run.run_id}`;
}

/** How a run's events are streamed: from which event on, whether a disconnect cancels it, which modes. */
interface StreamRunOptions {
  afterId: number;
  cancelOnDisconnect: boolean;
  modes?: string[];
}

/** The run's events as server-sent events (the run service follows it; this only writes them). */
function streamRun(deps: ServerDeps, run: Run, { afterId, cancelOnDisconnect, modes }: StreamRunOptions): Response {
  return sseResponse(deps.runs.follow(run, { afterId, knownStatus: run.status }), {
    headers: { "Content-Location": runPath(run), Location: `${runPath(run)}/stream` },
    modes,
    heartbeatMs: deps.heartbeatMs,
    onDisconnect: cancelOnDisconnect ? () => void deps.runs.cancelLatest(run.run_id) : undefined,
  });
}

/** A query flag: "1" or "true". */
function flag(c: Context<AppEnv>, name: string): boolean {
  return c.req.query(name) === "1" || c.req.query(name) === "true";
}

/** The cancel action a request asks for (`?action=rollback`, else interrupt). */
function cancelAction(c: Context<AppEnv>): "interrupt" | "rollback" {
  return c.req.query("action") === "rollback" ? "rollback" : "interrupt";
}

/** Waits for a run's output, cancelling the run when the client goes away and `cancelOnAbort` says so. */
async function outputOf(
  deps: ServerDeps,
  c: Context<AppEnv>,
  { run, cancelOnAbort }: { run: Run; cancelOnAbort: boolean },
): Promise<unknown> {
  const signal = c.req.raw.signal;
  const onAbort = () => void deps.runs.cancel(run, "interrupt");
  if (cancelOnAbort) signal.addEventListener("abort", onAbort, { once: true });
  try {
    return await deps.runs.output(run, signal);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** Creating runs: in the background, streamed, waited for; on a thread or stateless; and batches of stateless runs. */
function mountCreate(app: Hono<AppEnv>, deps: ServerDeps): void {
  const create = async (c: Context<AppEnv>, threadId: string | null) => {
    const body = parseBody(s.runCreate, await jsonBody(c));
    return { body, run: await deps.runs.create({ user: userOf(c), body, threadId, client: requestClient(c, deps) }) };
  };
  const background = async (c: Context<AppEnv>, threadId: string | null) => {
    const { run } = await create(c, threadId);
    c.header("Content-Location", runPath(run));
    return c.json(run);
  };
  const stream = async (c: Context<AppEnv>, threadId: string | null) => {
    const { body, run } = await create(c, threadId);
    return streamRun(deps, run, { afterId: 0, cancelOnDisconnect: body.on_disconnect === "cancel" });
  };
  const wait = async (c: Context<AppEnv>, threadId: string | null) => {
    const { body, run } = await create(c, threadId);
    const out = await outputOf(deps, c, { run, cancelOnAbort: body.on_disconnect === "cancel" });
    c.header("Content-Location", runPath(run));
    return c.json(out as object);
  };

  app.post("/threads/:thread_id/runs", (c) => background(c, c.req.param("thread_id")));
  app.post("/threads/:thread_id/runs/stream", (c) => stream(c, c.req.param("thread_id")));
  app.post("/threads/:thread_id/runs/wait", (c) => wait(c, c.req.param("thread_id")));
  app.post("/runs", (c) => background(c, null));
  app.post("/runs/stream", (c) => stream(c, null));
  app.post("/runs/wait", (c) => wait(c, null));

  app.post("/runs/batch", async (c) => {
    const body = await jsonBody(c);
    if (!Array.isArray(body)) throw agentcliError(RunBatchNotArray);
    // Every run is checked before any is created; an error names the run by its index.
    const parsed: s.RunCreateBody[] = [];
    for (const [i, b] of body.entries()) parsed.push(await checkBatchRun(deps, c, { body: b, index: i }));
    const out: Run[] = [];
    const client = requestClient(c, deps);
    for (const b of parsed) out.push(await deps.runs.create({ user: userOf(c), body: b, threadId: null, client }));
    return c.json(out);
  });
}

/** One run of a batch, parsed and checked; its error names it by its index. */
async function checkBatchRun(
  deps: ServerDeps,
  c: Context<AppEnv>,
  { body, index }: { body: unknown; index: number },
): Promise<s.RunCreateBody> {
  try {
    const run = parseBody(s.runCreate, body);
    const assistant = await resolveAssistant(deps, run.assistant_id, scopeOf(c));
    await deps.runs.checkInput({ graphId: assistant.graph_id, input: run.input, command: run.command });
    return run;
  } catch (err) {
    if (!(err instanceof AgentcliError)) throw err;
    // The catalogue's error as it was raised, its message prefixed with the run's index.
    throw new AgentcliError(err.code, {
      message: err.message.startsWith("Invalid request: ")
        ? err.message.replace(/^Invalid request: /, `Invalid request: [${index}].`)
        : `Run [${index}]: ${err.message}`,
      hint: err.hint,
      status: err.status,
    });
  }
}

/** The run a request's path names (`thread_id` when there is one, `run_id`), or a 404. */
async function getRun(deps: ServerDeps, c: Context<AppEnv>): Promise<Run> {
  const threadId = c.req.param("thread_id") ?? null;
  const run = await deps.storage.runs.get(c.req.param("run_id")!, threadId, scopeOf(c));
  if (!run) throw notFound("Run", c.req.param("run_id")!);
  return run;
}

/** Cancelling runs: many (by ids, by thread, or all the caller's in flight) or one. */
function mountCancel(app: Hono<AppEnv>, deps: ServerDeps): void {
  const { storage } = deps;
  app.post("/runs/cancel", async (c) => {
    const b = parseBody(s.runsCancelMany, await jsonBody(c));
    let runs: Run[] = [];
    if (b.run_ids?.length) {
      for (const id of b.run_ids) {
        const r = await storage.runs.get(id, b.thread_id, scopeOf(c));
        if (!r) throw notFound("Run", id);
        runs.push(r);
      }
    } else if (b.thread_id) {
      await getThread(deps, c, b.thread_id);
      runs = await storage.runs.inflight(b.thread_id);
    } else {
      runs = await storage.runs.inflightAll(scopeOf(c).owner);
    }
    if (b.status && b.status !== "all") runs = runs.filter((r) => r.status === b.status);
    for (const r of runs) if (!FINAL.includes(r.status)) await deps.runs.cancel(r, cancelAction(c));
    return c.body(null, 204);
  });

  app.post("/threads/:thread_id/runs/:run_id/cancel", async (c) => {
    const run = await getRun(deps, c);
    // Cancelling a run that ended is a no-op success, as on LangGraph's server.
    if (!FINAL.includes(run.status)) await deps.runs.cancel(run, cancelAction(c));
    if (flag(c, "wait")) {
      await deps.runs.output(run, c.req.raw.signal);
      return c.body(null, 204);
    }
    return c.body(null, 202);
  });
}

/** A whole-number query value: its name, its default, and its range. */
interface IntQuery {
  name: string;
  fallback: number;
  min: number;
  max: number;
}

function intQuery(c: Context<AppEnv>, { name, fallback, min, max }: IntQuery): number {
  const raw = c.req.query(name);
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw agentcliError(QueryNotInRange, { name, min, max, raw });
  return n;
}

/** Reading and deleting runs: a thread's list, one run. */
function mountRead(app: Hono<AppEnv>, deps: ServerDeps): void {
  const { storage } = deps;
  app.get("/threads/:thread_id/runs", async (c) => {
    await getThread(deps, c);
    const status = c.req.query("status") || undefined;
    if (status && !RUN_STATUSES.includes(status as RunStatus)) {
      throw agentcliError(RunStatusUnknown, { statuses: RUN_STATUSES.join(", "), status });
    }
    const runs = await storage.runs.list(c.req.param("thread_id"), {
      limit: intQuery(c, { name: "limit", fallback: 10, min: 1, max: 1000 }),
      offset: intQuery(c, { name: "offset", fallback: 0, min: 0, max: Number.MAX_SAFE_INTEGER }),
      status,
    });
    if (!deps.usage) return c.json(runs);
    // Beside LangGraph's fields, each run's `usage` (null: no model call recorded).
    const usage = await storage.usage.ofRuns(runs.map((r) => r.run_id));
    return c.json(runs.map((r) => ({ ...r, usage: usage.get(r.run_id) ?? null })));
  });

  // Beside LangGraph's fields, `usage`: the run's model calls' tokens and estimated cost (its subagents' included).
  app.get("/threads/:thread_id/runs/:run_id", async (c) => {
    const run = await getRun(deps, c);
    return c.json(deps.usage ? { ...run, usage: await storage.usage.ofRun(run.run_id) } : run);
  });

  // The run's trace kept locally: stored with its end; while it is in flight, the spans so far
  // from the replica executing it (another replica answers none until the end).
  app.get("/threads/:thread_id/runs/:run_id/trace", async (c) => {
    const run = await getRun(deps, c);
    const inFlight = run.status === "pending" || run.status === "running";
    const spans = (inFlight ? deps.traces.live(run.run_id) : null) ?? await storage.spans.read(run.run_id);
    return c.json({ run_id: run.run_id, spans });
  });

  app.delete("/threads/:thread_id/runs/:run_id", async (c) => {
    const run = await getRun(deps, c);
    if (!FINAL.includes(run.status)) throw agentcliError(RunNotFinished, { runId: run.run_id, status: run.status });
    await storage.runs.delete(run.run_id);
    return c.body(null, 204);
  });
}

/** Joining runs: waiting for one's output, or streaming its events from `Last-Event-ID` (a run's, or a thread's latest). */
function mountJoin(app: Hono<AppEnv>, deps: ServerDeps): void {
  const { storage } = deps;
  app.get("/threads/:thread_id/runs/:run_id/join", async (c) => {
    const run = await getRun(deps, c);
    return c.json((await outputOf(deps, c, { run, cancelOnAbort: flag(c, "cancel_on_disconnect") })) as object);
  });

  const joinStream = async (c: Context<AppEnv>) => {
    const threadId = c.req.param("thread_id") ?? null;
    const run = await storage.runs.get(c.req.param("run_id")!, threadId, scopeOf(c));
    if (!run) {
      // As LangGraph's server: the stream opens and carries the error (the SDK's joinStream reads it there).
      const thread = threadId ? await storage.threads.get(threadId, scopeOf(c)) : null;
      const what = threadId && !thread ? "Thread" : "Run";
      return sseResponse((async function* () {
        yield { id: 1, event: "error", data: JSON.stringify({ error: "NotFound", message: `404: ${what} not found` }) };
      })());
    }
    return streamRun(deps, run, {
      afterId: lastEventId(c.req.header("Last-Event-ID")),
      cancelOnDisconnect: flag(c, "cancel_on_disconnect"),
      modes: c.req.queries("stream_mode"),
    });
  };
  app.get("/threads/:thread_id/runs/:run_id/stream", joinStream);
  app.get("/runs/:run_id/stream", joinStream);

  app.get("/threads/:thread_id/stream", async (c) => {
    const t = await getThread(deps, c);
    const runs = await storage.runs.inflight(t.thread_id);
    const run = runs.at(-1) ?? (await storage.runs.list(t.thread_id, { limit: 1, offset: 0 }))[0];
    if (!run) throw notFound("Run on thread", t.thread_id);
    return streamRun(deps, run, {
      afterId: lastEventId(c.req.header("Last-Event-ID")),
      cancelOnDisconnect: false,
      modes: c.req.queries("stream_mode"),
    });
  });
}

/** The runs route group, mounted at `/`. */
export function runRoutes(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  mountCreate(app, deps);
  mountCancel(app, deps);
  mountRead(app, deps);
  mountJoin(app, deps);
  return app;
}
