/**
 * `/threads/{thread_id}/runs` and `/runs`: create (background), stream, wait, batch, list,
 * get, delete, join, join-stream (`Last-Event-ID`), cancel (one or many), and the stateless
 * forms on a temporary thread.
 */
import { type Context, Hono } from "hono";
import type { Run, RunStatus } from "../../storage/index.ts";
import { type AppEnv, cancelRun, createRun, type RunEnd, scopeOf, userOf } from "../../engine/index.ts";
import { resolveAssistant, type ServerDeps } from "../deps.ts";
import { conflict, jsonBody, notFound, parseBody, unprocessable } from "../http/errors.ts";
import { checkMessages } from "../http/limits.ts";
import { AgentcliError, userError } from "../../kernel/index.ts";
import * as s from "../http/schemas.ts";
import { lastEventId, sseResponse } from "../http/sse.ts";
import { getThread } from "./threads.ts";

const FINAL: RunStatus[] = ["success", "error", "timeout", "interrupted"];
const RUN_STATUSES: RunStatus[] = ["pending", "running", ...FINAL];

function runPath(run: Run): string {
  return `/threads/${run.thread_id}/runs/${run.run_id}`;
}

function follow(deps: ServerDeps, run: Run, afterId: number, signal?: AbortSignal) {
  return deps.broker.follow(run.run_id, {
    afterId,
    signal,
    status: async () => (await deps.storage.runs.get(run.run_id))?.status ?? null,
    knownStatus: run.status,
  });
}

/** Waits for a run's end and returns what `wait`/`join` answer: the final values. */
async function awaitOutput(deps: ServerDeps, run: Run, signal?: AbortSignal): Promise<unknown> {
  const it = follow(deps, run, 2_147_483_647, signal);
  let end: RunEnd | null = null;
  while (true) {
    const n = await it.next();
    if (n.done) {
      end = n.value ?? null;
      break;
    }
  }
  if (end?.output !== null && end?.output !== undefined) return end.output;
  const t = await deps.storage.threads.get(run.thread_id);
  if (end?.status === "error" || t?.status === "error") {
    return { __error__: t?.error ?? { error: "Error", message: "The run failed" } };
  }
  const interrupts = Object.values(t?.interrupts ?? {}).flat();
  return interrupts.length ? { ...(t?.values as object), __interrupt__: interrupts } : (t?.values ?? null);
}

/** How a run's events are streamed: from which event on, whether a disconnect cancels it, which modes. */
interface StreamRunOptions {
  afterId: number;
  cancelOnDisconnect: boolean;
  modes?: string[];
}

function streamRun(deps: ServerDeps, run: Run, { afterId, cancelOnDisconnect, modes }: StreamRunOptions): Response {
  return sseResponse(follow(deps, run, afterId), {
    headers: { "Content-Location": runPath(run), Location: `${runPath(run)}/stream` },
    modes,
    heartbeatMs: deps.heartbeatMs,
    onDisconnect: cancelOnDisconnect
      ? () => void deps.storage.runs.get(run.run_id).then((r) => r && cancelRun(deps, r, "interrupt"))
      : undefined,
  });
}

/** The runs route group, mounted at `/`. */
export function runRoutes(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { storage } = deps;

  const create = async (c: Context<AppEnv>, threadId: string | null) =>
    createRun(deps, userOf(c), parseBody(s.runCreate, await jsonBody(c)), threadId);

  const background = async (c: Context<AppEnv>, threadId: string | null) => {
    const run = await create(c, threadId);
    c.header("Content-Location", runPath(run));
    return c.json(run);
  };
  const stream = async (c: Context<AppEnv>, threadId: string | null) => {
    const body = parseBody(s.runCreate, await jsonBody(c));
    const run = await createRun(deps, userOf(c), body, threadId);
    return streamRun(deps, run, { afterId: 0, cancelOnDisconnect: body.on_disconnect === "cancel" });
  };
  const wait = async (c: Context<AppEnv>, threadId: string | null) => {
    const body = parseBody(s.runCreate, await jsonBody(c));
    const run = await createRun(deps, userOf(c), body, threadId);
    const signal = c.req.raw.signal;
    const onAbort = () => void cancelRun(deps, run, "interrupt");
    if (body.on_disconnect === "cancel") signal.addEventListener("abort", onAbort, { once: true });
    try {
      const out = await awaitOutput(deps, run, signal);
      c.header("Content-Location", runPath(run));
      return c.json(out as object);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  };

  app.post("/threads/:thread_id/runs", (c) => background(c, c.req.param("thread_id")));
  app.post("/threads/:thread_id/runs/stream", (c) => stream(c, c.req.param("thread_id")));
  app.post("/threads/:thread_id/runs/wait", (c) => wait(c, c.req.param("thread_id")));
  app.post("/runs", (c) => background(c, null));
  app.post("/runs/stream", (c) => stream(c, null));
  app.post("/runs/wait", (c) => wait(c, null));

  app.post("/runs/batch", async (c) => {
    const body = await jsonBody(c);
    if (!Array.isArray(body)) throw unprocessable("Invalid request: the batch body must be an array of runs");
    // Every run is checked before any is created; an error names the run by its index.
    const parsed: s.RunCreateBody[] = [];
    for (const [i, b] of body.entries()) {
      try {
        const run = parseBody(s.runCreate, b);
        const assistant = await resolveAssistant(deps, run.assistant_id, scopeOf(c));
        const chat = await deps.graphs.readsChatMessages(assistant.graph_id);
        checkMessages(run.input, "input", deps.limits, { chat });
        checkMessages(run.command?.update, "command.update", deps.limits, { chat });
        parsed.push(run);
      } catch (err) {
        if (!(err instanceof AgentcliError)) throw err;
        throw userError(err.code, {
          message: err.message.startsWith("Invalid request: ")
            ? err.message.replace(/^Invalid request: /, `Invalid request: [${i}].`)
            : `Run [${i}]: ${err.message}`,
          hint: err.hint,
          status: err.status,
        });
      }
    }
    const out: Run[] = [];
    for (const b of parsed) out.push(await createRun(deps, userOf(c), b, null));
    return c.json(out);
  });

  app.post("/runs/cancel", async (c) => {
    const b = parseBody(s.runsCancelMany, await jsonBody(c));
    const action = c.req.query("action") === "rollback" ? "rollback" : "interrupt";
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
    for (const r of runs) if (!FINAL.includes(r.status)) await cancelRun(deps, r, action);
    return c.body(null, 204);
  });

  app.get("/threads/:thread_id/runs", async (c) => {
    await getThread(deps, c);
    const int = (name: string, fallback: number, min: number, max: number) => {
      const raw = c.req.query(name);
      if (raw === undefined || raw === "") return fallback;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < min || n > max) {
        throw unprocessable(`Invalid request: ${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      }
      return n;
    };
    const status = c.req.query("status") || undefined;
    if (status && !RUN_STATUSES.includes(status as RunStatus)) {
      throw unprocessable(`Invalid request: status must be one of ${RUN_STATUSES.join(", ")} (got "${status}")`);
    }
    return c.json(
      await storage.runs.list(c.req.param("thread_id"), {
        limit: int("limit", 10, 1, 1000),
        offset: int("offset", 0, 0, Number.MAX_SAFE_INTEGER),
        status,
      }),
    );
  });

  const getRun = async (c: Context<AppEnv>): Promise<Run> => {
    const threadId = c.req.param("thread_id") ?? null;
    const run = await storage.runs.get(c.req.param("run_id")!, threadId, scopeOf(c));
    if (!run) throw notFound("Run", c.req.param("run_id")!);
    return run;
  };

  app.get("/threads/:thread_id/runs/:run_id", async (c) => c.json(await getRun(c)));

  app.delete("/threads/:thread_id/runs/:run_id", async (c) => {
    const run = await getRun(c);
    if (!FINAL.includes(run.status)) {
      throw conflict(`Cannot delete run "${run.run_id}": it is ${run.status}`, "Cancel it first.");
    }
    await storage.runs.delete(run.run_id);
    return c.body(null, 204);
  });

  app.get("/threads/:thread_id/runs/:run_id/join", async (c) => {
    const run = await getRun(c);
    const signal = c.req.raw.signal;
    const onAbort = () => void cancelRun(deps, run, "interrupt");
    if (c.req.query("cancel_on_disconnect") === "1" || c.req.query("cancel_on_disconnect") === "true") {
      signal.addEventListener("abort", onAbort, { once: true });
    }
    try {
      return c.json((await awaitOutput(deps, run, signal)) as object);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
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
    const cancel = c.req.query("cancel_on_disconnect") === "1" || c.req.query("cancel_on_disconnect") === "true";
    const modes = c.req.queries("stream_mode");
    return streamRun(deps, run, {
      afterId: lastEventId(c.req.header("Last-Event-ID")),
      cancelOnDisconnect: cancel,
      modes,
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

  app.post("/threads/:thread_id/runs/:run_id/cancel", async (c) => {
    const run = await getRun(c);
    const action = c.req.query("action") === "rollback" ? "rollback" : "interrupt";
    // Cancelling a run that ended is a no-op success, as on LangGraph's server.
    if (!FINAL.includes(run.status)) await cancelRun(deps, run, action);
    if (c.req.query("wait") === "1" || c.req.query("wait") === "true") {
      await awaitOutput(deps, run, c.req.raw.signal);
      return c.body(null, 204);
    }
    return c.body(null, 202);
  });

  return app;
}
