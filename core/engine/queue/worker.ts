/**
 * In-process workers for the durable run queue. `wake()` claims work immediately (no polling
 * sleep on the hot path); a timer (a third of the run lease) renews the leases of the runs
 * executing here, takes over runs whose replica stopped renewing theirs (they resume from
 * their last checkpoint), and covers delayed runs (`after_seconds`) and wake-ups lost between
 * replicas. On the embedded engine (one process owns the data) runs a crash left `running`
 * are failed at start, with an `error` event on their stream, so nothing stays stuck; on
 * every engine, threads left `busy` with no run in flight are freed at start. A pool of a
 * server with a revision (`AGENTCLI_REVISION_ID` under `serve`) renews its revision's mark of
 * life with its leases: runs created on a revision execute on it while it has a live worker.
 */
import {
  type ClaimedRun,
  MAX_RUN_ATTEMPTS,
  type Run,
  type Storage,
  type TakenRun,
  withBackgroundRetry,
} from "../../storage/index.ts";
export { DEFAULT_QUEUE_AFFINITY_SECONDS } from "../../storage/index.ts";
import type { RunBroker } from "../broker/broker.ts";
import { type ExecutableRun, executeRun, type ExecutorDeps, type ResumeOptions } from "../executor/executor.ts";
import type { IdleCollector } from "./idle-gc.ts";

/** The longest delay a timer holds (2^31-1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/** The wake-up of the other replicas comes this long after a held run's affinity ended (clocks: the database's `now()` set it). */
const AFFINITY_MARGIN_MS = 20;

export interface WorkerPoolOptions extends ExecutorDeps {
  /** Runs executed at once by this process. */
  concurrency: number;
  /** Most runs of one owner executing at once across the deployment (0: no limit but `concurrency`). */
  maxRunningPerOwner?: number;
  /** True when this process is the only one on its database (embedded engine). */
  exclusive: boolean;
  /** Told when runs start here and when none executes any more (./idle-gc.ts). */
  idle?: IdleCollector;
  /** Seconds a run queued here while this pool is full is kept for it (shared database only; default 0: none). */
  affinitySeconds?: number;
}

/** A pool of run workers. */
export class WorkerPool {
  readonly #deps: WorkerPoolOptions;
  readonly #active = new Map<string, Promise<void>>();
  #claiming = false;
  #again = false;
  /** Room reserved by runs being inserted already claimed. */
  #reserved = 0;
  /** Pending runs may exist that no claim here has seen yet (cleared when a claim finds none). */
  #maybePending = true;
  /** Delayed runs (`after_seconds`) may exist: look up when the next one is due. */
  #checkDelayed = true;
  #stopped = false;
  #timer: ReturnType<typeof setInterval> | null = null;
  #delayTimer: ReturnType<typeof setTimeout> | null = null;
  readonly #unsubscribe: () => void;
  /** Runs queued here with affinity, not started yet: the wake-up of the other replicas when it ends. */
  readonly #held = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(deps: WorkerPoolOptions) {
    this.#deps = deps;
    // Wake-ups from elsewhere (another replica, a finished run) may mean runnable work.
    this.#unsubscribe = (deps.broker as RunBroker).onWake(() => {
      this.#maybePending = true;
      this.wake();
    });
  }

  get storage(): Storage {
    return this.#deps.storage;
  }

  /**
   * Seconds a run created here, queued because this pool is full, is held for this pool
   * before other replicas may take it (0: none, as on an exclusive database or with no workers).
   */
  get affinitySeconds(): number {
    if (this.#stopped || this.#deps.exclusive || this.#deps.concurrency <= 0) return 0;
    return this.#deps.affinitySeconds ?? 0;
  }

  /** Recovers orphaned runs, then starts claiming. */
  async start(): Promise<void> {
    if (this.#deps.exclusive) await this.#failOrphans();
    await this.#freeStranded();
    if (this.#beats) await this.#deps.storage.runs.beat();
    const period = Math.max(250, (this.#deps.storage.runs.leaseSeconds * 1000) / 3);
    this.#timer = setInterval(() => void this.#tick(), period);
    (this.#timer as { unref?: () => void }).unref?.();
    if (!this.#deps.exclusive) void this.#tick();
    this.wake();
    if (this.#active.size === 0) this.#deps.idle?.idle();
  }

  /** The embedded engine at start: every run left `running` died with the previous process. */
  async #failOrphans(): Promise<void> {
    const error = {
      error: "ServerStopped",
      message: "The server stopped while this run was running; start the run again.",
    };
    for (const run of await this.#deps.storage.runs.recoverOrphans(true)) {
      this.#deps.log.warn(`run ${run.run_id} was running when the server stopped; marked "error"`);
      await this.#deps.storage.threads.setError(run.thread_id, error);
      // Its stream ends with an `error` event (after what was logged), never a silent close.
      const logged = await this.#deps.broker.logged(run.run_id);
      await this.#deps.broker.writeLog(run.run_id, [{
        id: (logged.at(-1)?.id ?? 0) + 1,
        event: "error",
        data: JSON.stringify(error),
      }]);
      this.#deps.broker.finishRemote(run.run_id, { status: "error", output: { __error__: error } });
    }
  }

  /** Threads a run left `busy` with none in flight (its end could not be recorded) take runs again. */
  async #freeStranded(): Promise<void> {
    try {
      for (const id of await this.#deps.storage.threads.freeStranded()) {
        this.#deps.log.warn(`thread ${id} was busy with no run in flight; freed`);
      }
    } catch (err) {
      this.#deps.log.error("cannot free threads left busy with no run in flight", err);
    }
  }

  #ticking = false;

  /** This pool tells the other revisions' workers it is alive (./storage/runs/revisions.ts): it runs the queue on a shared database. */
  get #beats(): boolean {
    return !this.#deps.exclusive && this.#deps.concurrency > 0 && this.#deps.storage.runs.revision !== null;
  }

  async #tick(): Promise<void> {
    if (this.#stopped || this.#ticking) return;
    this.#ticking = true;
    try {
      // Runs whose lease another replica took (this one could not renew in time) stop here.
      for (const id of await this.#deps.storage.runs.renewLeases([...this.#active.keys()])) {
        this.#deps.broker.loseLease(id);
      }
      if (this.#beats && !this.#stopped) await this.#deps.storage.runs.beat();
      if (!this.#deps.exclusive) await this.#takeOver();
    } catch (err) {
      if (!this.#stopped) this.#deps.log.error("cannot renew run leases", err);
    } finally {
      this.#ticking = false;
    }
    this.#maybePending = true;
    this.#checkDelayed = true;
    this.wake();
  }

  /** Takes over (resumes) runs whose replica stopped renewing their leases, while there is room. */
  async #takeOver(): Promise<void> {
    while (!this.#stopped && this.#active.size + this.#reserved < this.#deps.concurrency) {
      const run = await this.#deps.storage.runs.takeOver();
      if (!run) return;
      this.#execute(run, resumeOf(run));
      this.#deps.log.warn(
        `run ${run.run_id}: its replica stopped renewing its lease; taken over here (attempt ${run.attempt})`,
      );
    }
  }

  /**
   * Reserves room for a run that its creator inserts already claimed (`running`); give it
   * back with `release`, or start the run with `startClaimed`.
   */
  reserve(): boolean {
    if (this.#stopped || this.#active.size + this.#reserved >= this.#deps.concurrency) return false;
    this.#reserved++;
    return true;
  }

  release(): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
  }

  /** Starts a run inserted claimed by this process (after `reserve`). */
  startClaimed(run: ClaimedRun & Pick<ExecutableRun, "threadMetadata">): void {
    this.release();
    this.#execute(run);
  }

  /**
   * Hands a run just created here to the pool: claimed and started at once when there is
   * room (one statement, no queue scan); otherwise it waits in the queue for this pool or,
   * with `broadcast`, for another replica's.
   */
  submit(run: Run, opts: { delayed?: boolean; affine?: boolean } = {}): void {
    if (this.#stopped) return;
    if (opts.affine) {
      // Held for this pool (see affinitySeconds): claimed here when a worker frees, by the
      // other replicas (woken then) once the affinity has ended.
      const ms = this.affinitySeconds * 1000;
      this.#deps.broker.hold(run.run_id, ms);
      const t = setTimeout(() => {
        this.#held.delete(run.run_id);
        if (!this.#stopped) this.#deps.broker.wake({ remoteOnly: true });
      }, ms + AFFINITY_MARGIN_MS);
      (t as { unref?: () => void }).unref?.();
      this.#held.set(run.run_id, t);
      this.#maybePending = true;
      this.wake();
      return;
    }
    if (opts.delayed) {
      this.#checkDelayed = true;
      this.#deps.broker.wake({ broadcast: true });
      return;
    }
    if (this.#active.size + this.#reserved >= this.#deps.concurrency || this.#claiming) {
      this.#deps.broker.wake({ broadcast: true });
      return;
    }
    void this.#deps.storage.runs.claim(run.run_id, this.#claimOpts()).then((claimed) => {
      if (claimed && !this.#stopped) this.#execute(claimed);
      else this.#deps.broker.wake({ broadcast: true }); // the thread is busy, or full here: queued
    }, (err) => {
      if (!this.#stopped) this.#deps.log.error("cannot claim runs", err);
      this.#deps.broker.wake({ broadcast: true });
    });
  }

  /** Owners whose runs this pool started, most recent first: the claim serves the others first. */
  readonly #served: string[] = [];

  #claimOpts(): { maxRunningPerOwner?: number; recentOwners: string[] } {
    return { maxRunningPerOwner: this.#deps.maxRunningPerOwner, recentOwners: this.#served };
  }

  #execute(run: Run, resume?: ResumeOptions): void {
    const held = this.#held.get(run.run_id);
    if (held) {
      clearTimeout(held);
      this.#held.delete(run.run_id);
    }
    const owner = run.metadata?.owner;
    if (typeof owner === "string") {
      const i = this.#served.indexOf(owner);
      if (i >= 0) this.#served.splice(i, 1);
      this.#served.unshift(owner);
      if (this.#served.length > 256) this.#served.pop();
    }
    // A run a request started outlives it: its statements wait out a database restart as long as background work does.
    this.#deps.idle?.busy();
    const p = withBackgroundRetry(() => executeRun(this.#deps, run, resume)).finally(() => {
      this.#active.delete(run.run_id);
      if (this.#maybePending) this.wake();
      if (this.#active.size === 0) this.#deps.idle?.idle();
    });
    this.#active.set(run.run_id, p);
  }

  /** Claims runs until the pool is full or the queue has nothing runnable. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    if (!this.#maybePending && !this.#checkDelayed) return;
    this.#claiming = true;
    void this.#claimLoop();
  }

  async #claimLoop(): Promise<void> {
    try {
      do {
        this.#again = false;
        while (!this.#stopped && this.#maybePending && this.#active.size + this.#reserved < this.#deps.concurrency) {
          const run = await this.#deps.storage.runs.claim(undefined, this.#claimOpts());
          if (!run) {
            this.#maybePending = false;
            break;
          }
          this.#execute(run);
        }
      } while (this.#again && !this.#stopped);
      if (this.#checkDelayed) {
        this.#checkDelayed = false;
        await this.#scheduleDelayed();
      }
    } catch (err) {
      if (!this.#stopped) this.#deps.log.error("cannot claim runs", err);
    } finally {
      this.#claiming = false;
    }
  }

  async #scheduleDelayed(): Promise<void> {
    const delay = await this.#deps.storage.runs.nextDelay();
    if (this.#delayTimer) clearTimeout(this.#delayTimer);
    this.#delayTimer = null;
    if (delay === null || this.#stopped) return;
    // A timer longer than 2^31-1 ms fires at once (and would re-arm in a loop): wait in steps.
    this.#delayTimer = setTimeout(() => {
      this.#maybePending = true;
      this.#checkDelayed = true;
      this.wake();
    }, Math.min(Math.ceil(delay * 1000) + 5, MAX_TIMER_MS));
    (this.#delayTimer as { unref?: () => void }).unref?.();
  }

  /** Run ids executing in this process. */
  active(): string[] {
    return [...this.#active.keys()];
  }

  /**
   * Stops claiming; waits up to `graceMs` for in-flight runs, then hands the rest back: on
   * PostgreSQL another replica takes them over at once and resumes them from their last
   * checkpoint; on the embedded engine (no other replica) they are cancelled and end
   * `interrupted` (their checkpoints are kept, so they can be resumed).
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.#stopped = true;
    this.#deps.idle?.close();
    this.#unsubscribe();
    if (this.#timer) clearInterval(this.#timer);
    if (this.#delayTimer) clearTimeout(this.#delayTimer);
    for (const t of this.#held.values()) clearTimeout(t);
    this.#held.clear();
    if (!this.#deps.exclusive) {
      // Runs queued here with affinity are let go at once: the other replicas take them now,
      // and those of this revision too when this was its last worker.
      try {
        const left = this.#beats;
        if (left) await this.#deps.storage.runs.beat(true);
        if ((await this.#deps.storage.runs.releaseQueued()) || left) this.#deps.broker.wake({ remoteOnly: true });
      } catch (err) {
        this.#deps.log.error(
          "stopping: cannot let go of the runs queued here (the other replicas take them once their affinity ends)",
          err,
        );
      }
    }
    const all = Promise.allSettled([...this.#active.values()]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs))),
    ]);
    if (timer) clearTimeout(timer);
    if (timedOut) {
      const held = [...this.#active.keys()];
      let handedBack = false;
      if (!this.#deps.exclusive) {
        try {
          await this.#deps.storage.runs.handBack(held);
          handedBack = true;
          this.#deps.log.info(
            `stopping: ${held.length} run(s) not finished in ${graceMs / 1000} s handed back to the other replicas`,
          );
        } catch (err) {
          this.#deps.log.error("stopping: cannot hand runs back (they are taken over once their leases expire)", err);
        }
      }
      for (const id of held) {
        if (handedBack) this.#deps.broker.loseLease(id);
        else this.#deps.broker.cancel(id, "interrupt");
      }
      await all;
    }
  }
}

/** How a taken-over run goes on: cancelled meanwhile, out of attempts, or resumed. */
function resumeOf(run: TakenRun): ResumeOptions {
  if (run.cancel_reason === "interrupt" || run.cancel_reason === "rollback") {
    return { resumed: true, cancelled: run.cancel_reason };
  }
  if (run.attempt > MAX_RUN_ATTEMPTS) {
    return {
      resumed: true,
      fail: {
        error: "RunLost",
        message: `The replicas running this run stopped ${
          run.attempt - 1
        } times before it ended; it is not resumed again. Start the run again.`,
      },
    };
  }
  return { resumed: true };
}
