/**
 * Cancellation of the runs executing here: each has an abort signal, fired by a cancel
 * (from here or, over the bus, from another replica) or by the loss of its lease.
 */
export type CancelAction = "interrupt" | "rollback";

/** The abort reason of a run another replica took over (its lease here expired). */
export class LeaseLost extends Error {
  constructor() {
    super("The run's lease was lost: another replica runs it now");
    this.name = "LeaseLost";
  }
}

/** The abort reason of a cancelled run. */
export class RunCancelled extends Error {
  readonly action: CancelAction;
  constructor(action: CancelAction) {
    super(`Run cancelled (${action})`);
    this.name = "RunCancelled";
    this.action = action;
  }
}

/** The abort controllers of the runs executing here. */
export class RunAborts {
  readonly #byRun = new Map<string, AbortController>();

  /** A run starts executing here: the signal its cancellation fires. */
  start(runId: string): AbortSignal {
    const controller = new AbortController();
    this.#byRun.set(runId, controller);
    return controller.signal;
  }

  /** The run no longer executes here (it ended, or another replica took it over). */
  forget(runId: string): void {
    this.#byRun.delete(runId);
  }

  /** Cancels the run if it executes here; false when it does not. */
  cancel(runId: string, action: CancelAction): boolean {
    const c = this.#byRun.get(runId);
    if (!c) return false;
    c.abort(new RunCancelled(action));
    return true;
  }

  /** Aborts a run executing here whose lease this replica lost (see ../queue/worker.ts). */
  loseLease(runId: string): void {
    this.#byRun.get(runId)?.abort(new LeaseLost());
  }
}
