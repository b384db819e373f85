/**
 * Creating and cancelling runs: thread lookup (or `if_not_exists: "create"`), the multitask
 * strategies (`reject`, `interrupt`, `rollback`, `enqueue`), owner scoping, and the wake-up
 * of a worker. All checks and the insert happen in one transaction on the thread row.
 */
import type { AuthUser } from "../../kernel/index.ts";
import { currentCheck, type Run } from "../../storage/index.ts";
import type { CancelAction } from "../broker/broker.ts";
import { resolveAssistant, type ServerDeps } from "../../server/deps.ts";
import type { RunKwargs } from "../executor/executor.ts";
import { conflict, idTaken, notFound, unprocessable } from "../../server/http/errors.ts";
import type { RunCreateBody } from "./input.ts";
import { checkMessages, tooManyRuns } from "../../server/http/limits.ts";
import { ownedMetadata, ownerOf, scopedConfig } from "./scope.ts";

/** Creates a run on `threadId` (or on a new temporary thread when null). */
export async function createRun(
  deps: ServerDeps,
  user: AuthUser | null,
  b: RunCreateBody,
  threadId: string | null,
): Promise<Run> {
  // On an existing thread, the assistant as last looked up here (no query), checked by the
  // statement that creates the run: when another replica changed it, looked up again.
  for (let attempt = 0; attempt < 3 && threadId !== null; attempt++) {
    const run = await createRunOnce(deps, user, b, threadId, true);
    if (run) return run;
  }
  return (await createRunOnce(deps, user, b, threadId, false))!;
}

/** Null when `hinted` and the assistant remembered was not current (see AssistantStore.resolveHint). */
async function createRunOnce(
  deps: ServerDeps,
  user: AuthUser | null,
  b: RunCreateBody,
  threadId: string | null,
  hinted: boolean,
): Promise<Run | null> {
  const { storage } = deps;
  const scope = { owner: ownerOf(user) };
  const { assistant: found, hint } = hinted
    ? await storage.assistants.resolveHint(b.assistant_id, scope)
    : { assistant: null, hint: null };
  const assistant = found ?? await resolveAssistant(deps, b.assistant_id, scope);
  const stateless = threadId === null;
  const tid = threadId ?? crypto.randomUUID();
  const chat = await deps.graphs.readsChatMessages(assistant.graph_id);
  checkMessages(b.input, "input", deps.limits, { chat });
  checkMessages(b.command?.update, "command.update", deps.limits, { chat });
  if (b.webhook) await deps.webhooks.check(b.webhook);
  await checkRunTargets(deps, assistant.graph_id, b, threadId, user);
  // The per-user queue cap: on an existing thread, checked by the statement that creates the run.
  const queuedCap = user && deps.limits.maxQueuedPerOwner > 0
    ? { identity: user.identity, max: deps.limits.maxQueuedPerOwner }
    : null;
  const checkQueued = async () => {
    if (!queuedCap) return;
    const queued = await storage.runs.pendingOf(queuedCap.identity);
    if (queued >= queuedCap.max) throw tooManyRuns(deps.limits, queued);
  };
  const kwargs = runKwargs(user, b, stateless);
  const strategy = b.multitask_strategy ?? "enqueue";
  const runId = crypto.randomUUID();
  const input = {
    run_id: runId,
    thread_id: tid,
    assistant_id: assistant.assistant_id,
    metadata: ownedMetadata(user, b.metadata),
    kwargs: kwargs as Record<string, unknown>,
    multitask_strategy: strategy,
    after_seconds: b.after_seconds,
  };
  if (!stateless) {
    // The common case, one statement: an existing thread; the run starts here at once when
    // this process has room and the thread is free (inserted claimed: no queue round trip).
    const claim = !(b.after_seconds && b.after_seconds > 0) && deps.workers.reserve();
    const threadPatch = { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id };
    let created: Awaited<ReturnType<typeof storage.runs.createOnThread>>;
    try {
      created = await storage.runs.createOnThread(input, {
        owner: ownerOf(user),
        claim,
        threadPatch,
        maxRunningPerOwner: deps.limits.maxRunningPerOwner,
        queued: queuedCap,
        affinitySeconds: deps.workers.affinitySeconds,
        assistantCurrent: hint ? (params) => currentCheck(hint, params) : undefined,
      });
    } catch (err) {
      if (claim) deps.workers.release();
      throw err;
    }
    const { thread, run, overQueued, affine, assistantStale, threadEmpty } = created;
    if (hint && (assistantStale || !thread)) {
      // Changed on another replica (or, with no thread, the path below may use it): look it up again.
      if (claim) deps.workers.release();
      storage.assistants.forgetHint(hint);
      return null;
    }
    if (run) deps.broker.expect(run.run_id);
    if (claim && run?.status !== "running") deps.workers.release();
    if (overQueued !== undefined && thread && !(ownerOf(user) && thread.metadata.owner !== ownerOf(user))) {
      throw tooManyRuns(deps.limits, overQueued);
    }
    if (thread || b.if_not_exists !== "create") {
      if (!thread || !run) {
        if (!thread || (ownerOf(user) && thread.metadata.owner !== ownerOf(user))) {
          throw thread && b.if_not_exists === "create" ? idTaken("thread", tid) : notFound("Thread", tid);
        }
        throw conflict(
          `Cannot start a run on thread "${tid}": it has a run in progress`,
          'Wait for it, or choose multitask_strategy "enqueue", "interrupt" or "rollback".',
        );
      }
      if (thread.busy && (strategy === "interrupt" || strategy === "rollback")) {
        for (const r of await storage.runs.inflight(tid)) {
          if (r.run_id !== run.run_id) await cancelRun(deps, r, strategy);
        }
      }
      if (run.status === "running") {
        deps.workers.startClaimed({
          ...run,
          assistant: { graph_id: assistant.graph_id, config: assistant.config, context: assistant.context },
          // As the statement left it: the thread's metadata with the patch merged in.
          threadMetadata: { ...thread.metadata, ...threadPatch },
          ...(threadEmpty ? { threadEmpty } : {}),
        });
      } else if (thread.busy) {
        deps.broker.wake({ remoteOnly: true }); // it starts when the thread's run ends
      } else {
        deps.workers.submit(run, { delayed: (b.after_seconds ?? 0) > 0, affine });
      }
      return run;
    }
  }
  // A new thread (stateless run, or `if_not_exists: "create"`).
  await checkQueued();
  const run = await storage.transaction(async (tx) => {
    if (await storage.threads.lock(tid, tx)) throw idTaken("thread", tid); // created meanwhile (a concurrent request), or another owner's
    const meta = ownedMetadata(user, { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id });
    await storage.threads.create({ thread_id: tid, metadata: meta }, tx);
    return storage.runs.insert(input, tx, {});
  });
  deps.broker.expect(run.run_id);
  deps.workers.submit(run, { delayed: (b.after_seconds ?? 0) > 0 });
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
export async function checkRunTargets(
  deps: ServerDeps,
  graphId: string,
  b: RunCreateBody,
  threadId: string | null,
  user: AuthUser | null,
): Promise<void> {
  for (const field of ["interrupt_before", "interrupt_after"] as const) {
    const names = b[field];
    if (!Array.isArray(names) || names.length === 0) continue;
    const nodes = Object.keys((await deps.graphs.get(graphId)).nodes).filter((n) => n !== "__start__");
    const unknown = names.filter((n) => !nodes.includes(n));
    if (unknown.length) {
      throw unprocessable(
        `Invalid request: ${field} names ${
          unknown.map((n) => `"${n}"`).join(", ")
        }, not a node of graph "${graphId}" (its nodes: ${nodes.join(", ")}; or "*" for all)`,
      );
    }
  }
  const checkpointId = b.checkpoint_id ?? b.checkpoint?.checkpoint_id;
  if (!checkpointId) return;
  // Only on the caller's own thread (another user's is the thread's 404, asked next).
  if (threadId !== null && !(await deps.storage.threads.get(threadId, { owner: ownerOf(user) }))) return;
  const found = threadId !== null &&
    await deps.storage.checkpointer.getTuple({
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
export async function cancelRun(deps: ServerDeps, run: Run, action: CancelAction): Promise<void> {
  const { storage, broker } = deps;
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
        deps.webhooks.deliver(run.run_id, webhook, {
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
