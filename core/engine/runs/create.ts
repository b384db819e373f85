/**
 * Creating and cancelling runs: thread lookup (or `if_not_exists: "create"`), the multitask
 * strategies (`reject`, `interrupt`, `rollback`, `enqueue`), owner scoping, admission (the
 * input bounds, the per-user queue, a worker reserved here), and the wake-up of a worker. All
 * checks and the insert happen in one transaction on the thread row. The run service
 * (./service.ts) is how the other layers call these.
 */
import {
  agentcliError,
  type AuthUser,
  idTaken,
  InterruptNodeUnknown,
  notFound,
  ThreadBusy,
} from "../../kernel/index.ts";
import { type Assistant, type AssistantScope, currentCheck, type Run, type Storage } from "../../storage/index.ts";
import type { CancelAction } from "../broker/broker.ts";
import type { RunKwargs } from "../executor/executor.ts";
import type { CompiledGraph } from "../executor/graphs.ts";
import type { RunCreateBody } from "./input.ts";
import { checkMessages, tooManyRuns } from "./admission.ts";
import { ownedMetadata, ownerOf, scopedConfig } from "./scope.ts";
import { type RequestClient, usageSubject } from "../usage/limits.ts";
import type { RunServiceOptions } from "./service.ts";

/** What creates a run: who asks, the request, and its thread (null: a new temporary thread). */
export interface CreateRunRequest {
  user: AuthUser | null;
  body: RunCreateBody;
  threadId: string | null;
  /** The request's client (address, browser cookie): whom an anonymous caller's usage counts for. */
  client?: RequestClient;
}

/**
 * Finds an assistant by id, or the server's default assistant of a graph id or name
 * (`assistant_id: "agent"` works as in LangGraph Platform), among those `scope` sees: another
 * user's assistant is the same 404 as an unknown one.
 */
export async function resolveAssistant(
  from: { storage: Pick<Storage, "assistants"> },
  id: string,
  scope: AssistantScope | undefined,
): Promise<Assistant> {
  const a = await from.storage.assistants.resolve(id, scope);
  if (!a) throw notFound("Assistant", id);
  return a;
}

/** Creates a run on `req.threadId` (or on a new temporary thread when null). */
export async function createRun(o: RunServiceOptions, req: CreateRunRequest): Promise<Run> {
  // Over a usage budget or rate limit: a 429 naming it, before anything is stored.
  if (o.usage) await o.usage.admit(usageSubject(req.user, req.client));
  // On an existing thread, the assistant as last looked up here (no query), checked by the
  // statement that creates the run: when another replica changed it, looked up again.
  for (let attempt = 0; attempt < 3 && req.threadId !== null; attempt++) {
    const run = await createRunOnce(o, req, true);
    if (run) return run;
  }
  return (await createRunOnce(o, req, false))!;
}

type AssistantHint = Awaited<ReturnType<Storage["assistants"]["resolveHint"]>>["hint"];
type RunInput = Parameters<Storage["runs"]["insert"]>[0];

/** A request checked and ready to insert: its assistant (and the hint it was found by), its thread and its row. */
interface Admitted {
  req: CreateRunRequest;
  assistant: Assistant;
  hint: AssistantHint;
  tid: string;
  input: RunInput;
  /** The per-user queue cap, when the user has one. */
  queuedCap: { identity: string; max: number } | null;
}

/** Null when `hinted` and the assistant remembered was not current (see AssistantStore.resolveHint). */
async function createRunOnce(o: RunServiceOptions, req: CreateRunRequest, hinted: boolean): Promise<Run | null> {
  const a = await admit(o, req, hinted);
  if (req.threadId !== null) {
    const done = await createOnThread(o, a);
    if (done !== "no thread") return done;
  }
  return await createWithThread(o, a);
}

/** Looks the assistant up and checks the request (input bounds, webhook, targets); builds the run's row. */
async function admit(o: RunServiceOptions, req: CreateRunRequest, hinted: boolean): Promise<Admitted> {
  const { storage, limits } = o;
  const { user, body: b, threadId } = req;
  const scope = { owner: ownerOf(user) };
  const { assistant: found, hint } = hinted
    ? await storage.assistants.resolveHint(b.assistant_id, scope)
    : { assistant: null, hint: null };
  const assistant = found ?? await resolveAssistant(o, b.assistant_id, scope);
  const stateless = threadId === null;
  const tid = threadId ?? crypto.randomUUID();
  const chat = await o.graphs.readsChatMessages(assistant.graph_id);
  checkMessages(b.input, { field: "input", limits, chat });
  checkMessages(b.command?.update, { field: "command.update", limits, chat });
  if (b.webhook) await o.webhooks.check(b.webhook);
  await checkRunTargets(o, { graphId: assistant.graph_id, body: b, threadId, user });
  // The per-user queue cap: on an existing thread, checked by the statement that creates the run.
  const queuedCap = user && limits.maxQueuedPerOwner > 0
    ? { identity: user.identity, max: limits.maxQueuedPerOwner }
    : null;
  const input: RunInput = {
    run_id: crypto.randomUUID(),
    thread_id: tid,
    assistant_id: assistant.assistant_id,
    metadata: ownedMetadata(user, b.metadata),
    kwargs: {
      ...runKwargs(user, b, stateless),
      ...(o.usage ? { usage_subject: usageSubject(user, req.client) } : {}),
    } as Record<string, unknown>,
    multitask_strategy: b.multitask_strategy ?? "enqueue",
    after_seconds: b.after_seconds,
  };
  return { req, assistant, hint, tid, input, queuedCap };
}

/**
 * The common case, one statement: an existing thread; the run starts here at once when this
 * process has room and the thread is free (inserted claimed: no queue round trip). Null when
 * the hint was stale; "no thread" when the thread is to be created (`if_not_exists: "create"`).
 */
async function createOnThread(o: RunServiceOptions, a: Admitted): Promise<Run | null | "no thread"> {
  const { storage, workers } = o;
  const { req: { user, body: b }, assistant, hint, tid, input } = a;
  const claim = !(b.after_seconds && b.after_seconds > 0) && workers.reserve();
  const threadPatch = { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id };
  let created: Awaited<ReturnType<typeof storage.runs.createOnThread>>;
  try {
    created = await storage.runs.createOnThread(input, {
      owner: ownerOf(user),
      claim,
      threadPatch,
      maxRunningPerOwner: o.limits.maxRunningPerOwner,
      queued: a.queuedCap,
      affinitySeconds: workers.affinitySeconds,
      assistantCurrent: hint ? (params) => currentCheck(hint, params) : undefined,
    });
  } catch (err) {
    if (claim) workers.release();
    throw err;
  }
  const { thread, run, overQueued, affine, assistantStale, threadEmpty } = created;
  if (hint && (assistantStale || !thread)) {
    // Changed on another replica (or, with no thread, the path below may use it): look it up again.
    if (claim) workers.release();
    storage.assistants.forgetHint(hint);
    return null;
  }
  if (run) o.broker.expect(run.run_id);
  if (claim && run?.status !== "running") workers.release();
  const foreign = thread && ownerOf(user) && thread.metadata.owner !== ownerOf(user);
  if (overQueued !== undefined && thread && !foreign) throw tooManyRuns(o.limits, overQueued);
  if (!thread && b.if_not_exists === "create") return "no thread";
  if (!thread || !run) {
    if (!thread || foreign) {
      throw thread && b.if_not_exists === "create" ? idTaken("thread", tid) : notFound("Thread", tid);
    }
    throw agentcliError(ThreadBusy, { threadId: tid });
  }
  const strategy = input.multitask_strategy;
  if (thread.busy && (strategy === "interrupt" || strategy === "rollback")) {
    for (const r of await storage.runs.inflight(tid)) {
      if (r.run_id !== run.run_id) await cancelRun(o, r, strategy);
    }
  }
  if (run.status === "running") {
    workers.startClaimed({
      ...run,
      assistant: { graph_id: assistant.graph_id, config: assistant.config, context: assistant.context },
      // As the statement left it: the thread's metadata with the patch merged in.
      threadMetadata: { ...thread.metadata, ...threadPatch },
      ...(threadEmpty ? { threadEmpty } : {}),
    });
  } else if (thread.busy) {
    o.broker.wake({ remoteOnly: true }); // it starts when the thread's run ends
  } else {
    workers.submit(run, { delayed: (b.after_seconds ?? 0) > 0, affine });
  }
  return run;
}

/** A new thread (stateless run, or `if_not_exists: "create"`) and its run, in one transaction. */
async function createWithThread(o: RunServiceOptions, a: Admitted): Promise<Run> {
  const { storage } = o;
  const { req: { user, body: b }, assistant, tid, input, queuedCap } = a;
  if (queuedCap) {
    const queued = await storage.runs.pendingOf(queuedCap.identity);
    if (queued >= queuedCap.max) throw tooManyRuns(o.limits, queued);
  }
  const run = await storage.transaction(async (tx) => {
    if (await storage.threads.lock(tid, tx)) throw idTaken("thread", tid); // created meanwhile (a concurrent request), or another owner's
    const meta = ownedMetadata(user, { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id });
    await storage.threads.create({ thread_id: tid, metadata: meta }, tx);
    return storage.runs.insert(input, tx, {});
  });
  o.broker.expect(run.run_id);
  o.workers.submit(run, { delayed: (b.after_seconds ?? 0) > 0 });
  return run;
}

/** What a run executes (`runs.kwargs`), from its request; a stateless run's thread is deleted after it unless `on_completion: "keep"`. */
export function runKwargs(
  user: AuthUser | null,
  b: Omit<Partial<RunCreateBody>, "assistant_id">,
  stateless: boolean,
): RunKwargs {
  return {
    input: b.input ?? null,
    command: b.command ?? null,
    config: scopedConfig(user, (b.config ?? {}) as { configurable?: Record<string, unknown> }) as RunKwargs["config"],
    context: b.context,
    stream_mode: b.stream_mode ?? ["values"],
    stream_subgraphs: b.stream_subgraphs ?? false,
    interrupt_before: b.interrupt_before,
    interrupt_after: b.interrupt_after,
    checkpoint_id: b.checkpoint_id,
    checkpoint: b.checkpoint ?? null,
    durability: b.durability,
    checkpoint_during: b.checkpoint_during,
    ...(b.strict_resume ? { strict_resume: true } : {}),
    ...(b.webhook ? { webhook: b.webhook } : {}),
    on_completion: b.on_completion ?? (stateless ? "delete" : "keep"),
    temporary: stateless,
  };
}

/**
 * What a run names besides its thread must exist, or nothing is created: the nodes of
 * `interrupt_before`/`interrupt_after` (422 naming the unknown ones and the graph's) and the
 * checkpoint to start from (404; a run from a checkpoint that does not exist would start the
 * thread over and drop its earlier turns).
 */
export interface RunTargets {
  graphId: string;
  /** The run's fields that name targets: `interrupt_before`, `interrupt_after`, `checkpoint_id`, `checkpoint`. */
  body: Pick<RunCreateBody, "interrupt_before" | "interrupt_after" | "checkpoint_id" | "checkpoint"> & {
    config?: { configurable?: Record<string, unknown> } | null;
  };
  threadId: string | null;
  user: AuthUser | null;
}

/** Throws when a run's targets (see {@link RunTargets}) do not exist. */
export async function checkRunTargets(o: Pick<RunServiceOptions, "graphs" | "storage">, t: RunTargets): Promise<void> {
  const { graphId, body: b, threadId, user } = t;
  for (const field of ["interrupt_before", "interrupt_after"] as const) {
    const names = b[field];
    if (!Array.isArray(names) || names.length === 0) continue;
    // As LangGraph: the graph the run builds (a factory's, from the run's config), names at every level of its tree.
    const graph = await o.graphs.get(graphId, { configurable: { ...b.config?.configurable } });
    const nodes = await treeNodes(graph);
    const unknown = names.filter((n) => !nodes.includes(n));
    if (unknown.length) {
      throw agentcliError(InterruptNodeUnknown, {
        field,
        unknown: unknown.map((n) => `"${n}"`).join(", "),
        graphId,
        nodes: nodes.join(", "),
      });
    }
  }
  const checkpointId = b.checkpoint_id ?? b.checkpoint?.checkpoint_id;
  if (!checkpointId) return;
  // Only on the caller's own thread (another user's is the thread's 404, asked next).
  if (threadId !== null && !(await o.storage.threads.get(threadId, { owner: ownerOf(user) }))) return;
  const found = threadId !== null &&
    await o.storage.checkpointer.getTuple({
      configurable: {
        thread_id: threadId,
        checkpoint_ns: b.checkpoint?.checkpoint_ns ?? "",
        checkpoint_id: checkpointId,
      },
    });
  if (!found) throw notFound("Checkpoint", checkpointId);
}

/**
 * Cancels a run: a pending run ends `interrupted` at once (or is deleted on "rollback"); a
 * running run is aborted where it runs and ends `interrupted` (its writes removed on
 * "rollback"). Finished runs are left as they are.
 */
export async function cancelRun(
  o: Pick<RunServiceOptions, "storage" | "broker" | "webhooks">,
  run: Run,
  action: CancelAction,
): Promise<void> {
  const { storage, broker } = o;
  if (run.status === "pending") {
    const done = await storage.runs.setStatus(run.run_id, "interrupted", {
      fromStatuses: ["pending"],
      cancelReason: action,
    });
    if (done) {
      if (action === "rollback") await storage.runs.delete(run.run_id);
      const others = await storage.runs.inflight(run.thread_id);
      if (others.length === 0) await storage.threads.setStatus(run.thread_id, "idle");
      broker.finishRemote(run.run_id, { status: "interrupted", output: null });
      // It never ran, but it ended: its webhook hears so, with the thread's values as they are.
      const webhook = (done.kwargs as RunKwargs).webhook;
      if (webhook) {
        o.webhooks.deliver(run.run_id, webhook, {
          ...done,
          values: (await storage.threads.get(run.thread_id))?.values ?? null,
          error: null,
        });
      }
      return;
    }
  }
  await storage.runs.setCancelReason(run.run_id, action);
  broker.cancel(run.run_id, action);
}

/** The node names of a graph and of its subgraphs, at every level (`__start__` left out). */
async function treeNodes(graph: CompiledGraph): Promise<string[]> {
  const names = new Set(Object.keys(graph.nodes));
  for await (const [, sub] of graph.getSubgraphsAsync(undefined, true)) {
    for (const n of Object.keys(sub.nodes)) names.add(n);
  }
  names.delete("__start__");
  return [...names];
}
