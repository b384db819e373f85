/**
 * In-process workers for the durable run queue. `wake()` claims work immediately (no polling
 * sleep on the hot path); a slow timer covers delayed runs (`after_seconds`), wake-ups lost
 * between replicas, and lease renewal. On start, runs a crash left `running` are failed so
 * nothing stays stuck.
 */
import type { Run } from "../storage/records.ts";
import type { Storage } from "../storage/storage.ts";
import { type ClaimedRun, LEASE_SECONDS } from "../storage/runs.ts";
import type { RunBroker } from "./broker.ts";
import { executeRun, type ExecutorDeps } from "./executor.ts";

/** The longest delay a timer holds (2^31-1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

export interface WorkerPoolOptions extends ExecutorDeps {
  /** Runs executed at once by this process. */
  concurrency: number;
  /** Most runs of one owner executing at once across the deployment (0: no limit but `concurrency`). */
  maxRunningPerOwner?: number;
  /** True when this process is the only one on its database (embedded engine). */
  exclusive: boolean;
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

  /** Recovers orphaned runs, then starts claiming. */
  async start(): Promise<void> {
    await this.#recover(this.#deps.exclusive);
    const period = Math.max(1000, (LEASE_SECONDS * 1000) / 3);
    this.#timer = setInterval(() => void this.#tick(), period);
    (this.#timer as { unref?: () => void }).unref?.();
    this.wake();
  }

  async #recover(all: boolean): Promise<void> {
    const orphans = await this.#deps.storage.runs.recoverOrphans(all);
    for (const run of orphans) {
      this.#deps.log.warn(`run ${run.run_id} was running when the server stopped; marked "error"`);
      await this.#deps.storage.sql.query(
        "UPDATE threads SET status = 'error', error = $2::jsonb, updated_at = now() WHERE thread_id = $1",
        [run.thread_id, JSON.stringify({ error: "ServerStopped", message: "The server stopped while this run was running; start the run again." })],
      );
      this.#deps.broker.finishRemote(run.run_id, {
        status: "error",
        output: { __error__: { error: "ServerStopped", message: "The server stopped while this run was running" } },
      });
    }
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    try {
      await this.#deps.storage.runs.renewLeases([...this.#active.keys()]);
      if (!this.#deps.exclusive) await this.#recover(false);
    } catch (err) {
      this.#deps.log.error("cannot renew run leases", err);
    }
    this.#maybePending = true;
    this.#checkDelayed = true;
    this.wake();
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
  startClaimed(run: ClaimedRun): void {
    this.release();
    this.#execute(run);
  }

  /**
   * Hands a run just created here to the pool: claimed and started at once when there is
   * room (one statement, no queue scan); otherwise it waits in the queue for this pool or,
   * with `broadcast`, for another replica's.
   */
  submit(run: Run, opts: { delayed?: boolean } = {}): void {
    if (this.#stopped) return;
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

  #execute(run: Run): void {
    const owner = run.metadata?.owner;
    if (typeof owner === "string") {
      const i = this.#served.indexOf(owner);
      if (i >= 0) this.#served.splice(i, 1);
      this.#served.unshift(owner);
      if (this.#served.length > 256) this.#served.pop();
    }
    const p = executeRun(this.#deps, run).finally(() => {
      this.#active.delete(run.run_id);
      if (this.#maybePending) this.wake();
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
   * Stops claiming; waits up to `graceMs` for in-flight runs, then cancels the rest, which
   * end `interrupted` (their checkpoints are kept, so they can be resumed).
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe();
    if (this.#timer) clearInterval(this.#timer);
    if (this.#delayTimer) clearTimeout(this.#delayTimer);
    const all = Promise.allSettled([...this.#active.values()]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = await Promise.race([all.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs)))]);
    if (timer) clearTimeout(timer);
    if (timedOut) {
      for (const id of this.#active.keys()) this.#deps.broker.cancel(id, "interrupt");
      await all;
    }
  }
}
