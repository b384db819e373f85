/**
 * Fires due crons. Each firing is one transaction: lock the due cron (`FOR UPDATE SKIP
 * LOCKED`, so two replicas never take the same one), move its `next_run_date` on, insert its
 * run (and, stateless, a new thread), commit; only then is the run handed to the workers. A
 * crash before the commit leaves the firing due for the next tick; after it, the run is in
 * the durable queue. So each firing makes exactly one run, whatever the number of replicas.
 *
 * Missed firings: a cron whose time passed while no server was running fires once when a
 * server is back (however many firings were missed), and then at its next time after that.
 */
import type { AuthUser } from "../../kernel/index.ts";
import type { CronRecord, Run } from "../../storage/index.ts";
import { nextFiring } from "./schedule.ts";
import type { ServerDeps } from "../../server/deps.ts";
import { cancelRun, runKwargs } from "../runs/create.ts";
import type { RunCreateBody } from "../runs/input.ts";
import { ownedMetadata } from "../runs/scope.ts";

/** The longest a scheduler sleeps between looks at the table (crons created on other replicas). */
export const DEFAULT_CRON_POLL_MS = 10_000;

/** The time after `now` a cron fires next, or null when it is over (past `end_time`, or a schedule that never fires). */
export function nextRunDate(c: Pick<CronRecord, "schedule" | "timezone" | "end_time">, now: Date): string | null {
  let next: Date | null;
  try {
    next = nextFiring(c, now);
  } catch {
    return null;
  }
  if (!next || (c.end_time && next.getTime() > Date.parse(c.end_time))) return null;
  return next.toISOString();
}

interface Firing {
  cron: CronRecord;
  run: Run | null;
  /** Runs of the cron's thread that its multitask strategy (interrupt, rollback) cancels. */
  cancel: Run[];
}

/** Takes and fires one due cron in one transaction; null when none is due. */
export async function fireOneDue(deps: ServerDeps): Promise<Firing | null> {
  const { storage, log } = deps;
  return await storage.transaction(async (tx) => {
    const cron = await storage.crons.takeDue(tx);
    if (!cron) return null;
    const due = cron.next_run_date!;
    await storage.crons.update(cron.cron_id, { next_run_date: nextRunDate(cron, new Date(cron.now)) }, undefined, tx);
    const skip = (why: string): Firing => {
      log.warn(`cron ${cron.cron_id}: the firing of ${due} is skipped: ${why}`);
      return { cron, run: null, cancel: [] };
    };
    if (cron.end_time && Date.parse(due) > Date.parse(cron.end_time)) return { cron, run: null, cancel: [] };
    const graphId = await storage.assistants.graphOf(cron.assistant_id, tx);
    if (!graphId) return skip(`its assistant "${cron.assistant_id}" no longer exists`);
    const user = cron.auth_user as AuthUser | null;
    const body = cron.payload as Partial<RunCreateBody>;
    const stateless = cron.thread_id === null;
    const kwargs = runKwargs(
      user,
      { ...body, on_completion: stateless ? (cron.on_run_completed ?? "delete") : "keep" },
      stateless,
    );
    const threadId = cron.thread_id ?? crypto.randomUUID();
    const strategy = body.multitask_strategy ?? "enqueue";
    const input = {
      run_id: crypto.randomUUID(),
      thread_id: threadId,
      assistant_id: cron.assistant_id,
      metadata: ownedMetadata(user, { cron_id: cron.cron_id }),
      kwargs: kwargs as Record<string, unknown>,
      multitask_strategy: strategy,
    };
    const patch = { graph_id: graphId, assistant_id: cron.assistant_id };
    if (stateless) {
      await storage.threads.create({
        thread_id: threadId,
        metadata: ownedMetadata(user, { ...patch, cron_id: cron.cron_id }),
      }, tx);
      return { cron, run: await storage.runs.insert(input, tx), cancel: [] };
    }
    if (!(await storage.threads.lock(threadId, tx))) return skip(`its thread "${threadId}" no longer exists`);
    const inflight = await storage.runs.inflight(threadId, tx);
    if (inflight.length && strategy === "reject") {
      return skip(`thread "${threadId}" has a run in progress (multitask_strategy "reject")`);
    }
    const run = await storage.runs.insert(input, tx, patch);
    return { cron, run, cancel: strategy === "interrupt" || strategy === "rollback" ? inflight : [] };
  });
}

/** Fires due crons on a timer: at the earliest next firing, and at least every `pollMs`. */
export class CronScheduler {
  readonly #deps: ServerDeps;
  readonly #pollMs: number;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = false;

  constructor(deps: ServerDeps, opts: { pollMs?: number } = {}) {
    this.#deps = deps;
    this.#pollMs = opts.pollMs ?? DEFAULT_CRON_POLL_MS;
  }

  start(): void {
    this.poke();
  }

  /** Looks at the table now (a cron was created or changed here). */
  poke(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#running = this.#tick().finally(() => {
      this.#running = null;
      if (this.#again) {
        this.#again = false;
        this.poke();
      }
    });
  }

  async #tick(): Promise<void> {
    let wait = this.#pollMs;
    try {
      while (!this.#stopped) {
        const firing = await fireOneDue(this.#deps);
        if (!firing) break;
        if (firing.run) await this.#start(firing);
      }
      const next = this.#stopped ? null : await this.#deps.storage.crons.nextDue();
      if (next !== null) wait = Math.min(wait, Math.ceil(next * 1000) + 5);
    } catch (err) {
      if (!this.#stopped) this.#deps.log.error("cannot fire crons", err);
    }
    if (this.#stopped) return;
    this.#timer = setTimeout(() => this.poke(), wait);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  async #start(f: Firing): Promise<void> {
    const run = f.run!;
    this.#deps.broker.expect(run.run_id);
    for (const r of f.cancel) {
      await cancelRun(this.#deps, r, run.multitask_strategy === "rollback" ? "rollback" : "interrupt");
    }
    this.#deps.workers.submit(run);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#running;
  }
}
