/**
 * The run service: the one place that creates, cancels and follows runs. The server's routes
 * (runs, crons, a thread's delete, the MCP and A2A protocols) parse a request, call it, and
 * turn what it returns into HTTP; the cron scheduler hands it the runs it fires. Admission
 * (input bounds, the per-user queue, a worker reserved for a run inserted claimed) happens
 * inside `create`.
 *
 * @example
 * const runs = new RunService({ storage, broker, graphs, workers, limits, webhooks });
 * const run = await runs.create({ user, body, threadId });
 * for await (const event of runs.follow(run)) console.log(event.event);
 */
import type { Run, RunEvent, RunStatus, Storage } from "../../storage/index.ts";
import type { CancelAction, RunBroker, RunEnd } from "../broker/broker.ts";
import type { GraphRegistry } from "../executor/graphs.ts";
import type { WorkerPool } from "../queue/worker.ts";
import type { RunCreateBody } from "./input.ts";
import { checkMessages, type RunLimits } from "./admission.ts";
import { cancelRun, checkRunTargets, createRun, type CreateRunRequest, type RunTargets } from "./create.ts";
import type { WebhookSender } from "./webhooks.ts";
import type { UsageMeter } from "../usage/meter.ts";

/** What the run service works with. */
export interface RunServiceOptions {
  storage: Storage;
  broker: RunBroker;
  graphs: GraphRegistry;
  workers: WorkerPool;
  /** Admission bounds and per-user run quotas. */
  limits: RunLimits;
  /** Checks a run's webhook when it is created, and tells it when a pending run is cancelled. */
  webhooks: WebhookSender;
  /** Admits runs against the usage budgets and rate limits (none: no usage limits). */
  usage?: UsageMeter | null;
}

/** How a run is followed: after which event, until when, and the status its caller read (see RunBroker.follow). */
export interface RunFollowOptions {
  afterId?: number;
  signal?: AbortSignal;
  knownStatus?: RunStatus;
}

/** The input a run (or a cron's firings) would start with, checked against the admission bounds. */
export interface InputCheck {
  graphId: string;
  input?: unknown;
  command?: RunCreateBody["command"];
}

/** Creates, cancels and follows runs (see the module's comment). */
export class RunService {
  readonly #o: RunServiceOptions;

  constructor(o: RunServiceOptions) {
    this.#o = o;
  }

  /** Creates a run (on `threadId`, or on a new temporary thread when null) and hands it to the workers. */
  create(req: CreateRunRequest): Promise<Run> {
    return createRun(this.#o, req);
  }

  /** Cancels `run` as it was read (see cancelRun). */
  cancel(run: Run, action: CancelAction): Promise<void> {
    return cancelRun(this.#o, run, action);
  }

  /** Cancels every run in flight of a thread (the thread is being deleted), each as `cancel` would. */
  async cancelThread(threadId: string, action: CancelAction = "interrupt"): Promise<void> {
    for (const run of await this.#o.storage.runs.inflight(threadId)) await this.cancel(run, action);
  }

  /** Reads the run again, then cancels it: a follower went away, and the run may have moved on since it was read. */
  async cancelLatest(runId: string, action: CancelAction = "interrupt"): Promise<void> {
    const run = await this.#o.storage.runs.get(runId);
    if (run) await this.cancel(run, action);
  }

  /** A run's events after `afterId` (replayed, then live) until it ends; the generator returns how it ended. */
  follow(run: Pick<Run, "run_id">, opts: RunFollowOptions = {}): AsyncGenerator<RunEvent, RunEnd | null> {
    const { storage, broker } = this.#o;
    return broker.follow(run.run_id, {
      ...opts,
      status: async () => (await storage.runs.get(run.run_id))?.status ?? null,
    });
  }

  /** Waits for a run's end and returns what `wait`/`join` answer: the final values (or its error, or its interrupts). */
  async output(run: Run, signal?: AbortSignal): Promise<unknown> {
    const it = this.follow(run, { afterId: 2_147_483_647, signal, knownStatus: run.status });
    let end: RunEnd | null = null;
    while (true) {
      const n = await it.next();
      if (n.done) {
        end = n.value ?? null;
        break;
      }
    }
    if (end?.output !== null && end?.output !== undefined) return end.output;
    const t = await this.#o.storage.threads.get(run.thread_id);
    if (end?.status === "error" || t?.status === "error") {
      return { __error__: t?.error ?? { error: "Error", message: "The run failed" } };
    }
    const interrupts = Object.values(t?.interrupts ?? {}).flat();
    return interrupts.length ? { ...(t?.values as object), __interrupt__: interrupts } : (t?.values ?? null);
  }

  /** Checks a run's input and `command.update` against the admission bounds of the assistant's graph. */
  async checkInput(c: InputCheck): Promise<void> {
    const { graphs, limits } = this.#o;
    const chat = await graphs.readsChatMessages(c.graphId);
    checkMessages(c.input, { field: "input", limits, chat });
    checkMessages(c.command?.update, { field: "command.update", limits, chat });
  }

  /** Throws when what a run names besides its thread (interrupt nodes, a checkpoint) does not exist. */
  checkTargets(t: RunTargets): Promise<void> {
    return checkRunTargets(this.#o, t);
  }

  /** Throws a 422 when runs may not call `webhook`. */
  checkWebhook(webhook: string): Promise<void> {
    return this.#o.webhooks.check(webhook);
  }

  /**
   * Hands a run inserted elsewhere (a cron's firing) to the workers, after cancelling the runs
   * its multitask strategy replaces.
   */
  async dispatch(run: Run, replaced: readonly Run[] = []): Promise<void> {
    this.#o.broker.expect(run.run_id);
    for (const r of replaced) await this.cancel(r, run.multitask_strategy === "rollback" ? "rollback" : "interrupt");
    this.#o.workers.submit(run);
  }
}
