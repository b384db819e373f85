/**
 * The usage meter: admits new runs against the budgets and rate limits (./limits.ts; a 429
 * naming the limit, with `Retry-After`), and per run records every model call (its subagents'
 * too) with its estimated cost (./prices.ts), raising the budgets' counters. A run's calls are
 * read from its stream (./stream-usage.ts), or by a callback handler (./recorder.ts) when the
 * run has one anyway. A run whose calls cross a daily budget is stopped (its signal aborts
 * with a {@link UsageStop}) at its next model call, or at its end, and ends with an error
 * event naming the limit; a cron's run, created without a request, is admitted as it starts.
 *
 * @example
 * const meter = new UsageMeter({ store: storage.usage, prices, limits, log });
 * await meter.admit(subject); // throws a 429 over a limit
 * const usage = meter.startRun({ run_id, thread_id, assistant_id, subject });
 * for await (const [ns, mode, chunk] of await graph.stream(input, { streamMode: ["updates"], subgraphs: true, signal: AbortSignal.any([signal, usage.signal]) })) {
 *   if (mode === "updates") usage.observe(ns, chunk);
 * }
 * await usage.flush();
 * await storage.runs.complete({ ..., usage: usage.takeDeferred() });
 */
import {
  AgentcliError,
  agentcliError,
  RunRateLimited,
  type ServerLog,
  UsageLimitCrossed,
  UsageLimitReached,
} from "../../kernel/index.ts";
import type { DeferredUsage, UsageCall, UsageCounter, UsageStore } from "../../storage/index.ts";
import {
  anyUsageLimit,
  counterKey,
  describeAmount,
  describeWait,
  NO_USAGE_LIMITS,
  secondsToReset,
  USAGE_LIMIT_SETTINGS,
  type UsageLimits,
  type UsageLimitSetting,
  type UsageSubject,
} from "./limits.ts";
import { Prices } from "./prices.ts";
import { type ModelCall, UsageCallbacks } from "./recorder.ts";
import { StreamUsageReader } from "./stream-usage.ts";

/** What the meter works with. */
export interface UsageMeterOptions {
  store: UsageStore;
  /** The models' prices (default: none, costs are null). */
  prices?: Prices;
  /** The budgets and rate limits (default: none). */
  limits?: UsageLimits;
  /** The deployment owner's key (`PLATFORM_API_KEY`): `x-api-key` with it reads everyone's usage. */
  ownerKey?: string | null;
  /** The header a trusted proxy names the client's address in (`AGENTCLI_CLIENT_ADDRESS_HEADER`); none: the socket's. */
  addressHeader?: string | null;
  log: ServerLog;
}

/** The reason a run's usage signal aborts: it crossed a budget. `runError` is what its stream shows. */
export class UsageStop extends Error {
  readonly runError: { error: string; message: string };
  constructor(message: string) {
    super(message);
    this.name = "UsageLimitExceeded";
    this.runError = { error: "UsageLimitExceeded", message };
  }
}

/**
 * One run's metering: the callback handler for its graph (attached on its own, or fed by the
 * run's trace recorder), a signal that aborts over a budget, and a flush. A run no daily
 * budget applies to writes nothing while it goes: its calls are recorded with its end.
 */
export interface RunUsage {
  /** The one handler (an array, as LangChain's `callbacks` takes it), for a run that has a handler anyway. */
  callbacks: [UsageCallbacks];
  /** Else: the run's `updates` chunks (with subgraphs), read for its AI messages (./stream-usage.ts). */
  observe(ns: readonly string[], payload: unknown): void;
  signal: AbortSignal;
  /** Waits for the calls seen so far to be recorded against the budgets (then `signal` says whether one was crossed). */
  settled(): Promise<void>;
  /** Waits for the calls seen so far to be recorded (those kept for the end are written now). */
  flush(): Promise<void>;
  /** The calls kept for the run's end (null: none), handed over once. */
  takeDeferred(): DeferredUsage | null;
}

/** A run as the meter needs it. */
export interface MeteredRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  subject: UsageSubject;
}

/** Admits runs against the limits and records runs' model calls. */
export class UsageMeter {
  readonly #o: Required<UsageMeterOptions>;
  readonly #limited: boolean;
  /** Whether a daily budget is set: only then are the `day:` counters kept (a run's end raises them). */
  readonly #daily: boolean;
  /** Today's counters brought up to the day's calls (when a daily budget is set), before they are read. */
  readonly #caughtUp: Promise<void>;
  #recorded = 0;

  constructor(o: UsageMeterOptions) {
    this.#o = {
      ...o,
      prices: o.prices ?? new Prices({}),
      limits: o.limits ?? NO_USAGE_LIMITS,
      ownerKey: o.ownerKey ?? null,
      addressHeader: o.addressHeader?.toLowerCase() ?? null,
    };
    this.#limited = anyUsageLimit(this.#o.limits);
    this.#daily = USAGE_LIMIT_SETTINGS.some((s) => s.measure !== "runs" && this.#o.limits[s.key] > 0);
    // Without a daily budget the counters are not kept (two fewer writes a run): a server that
    // has one catches them up from the day's calls as it starts.
    this.#caughtUp = this.#daily
      ? this.#o.store.catchUpDay().catch((err) =>
        this.#o.log.warn(`today's usage counters could not be caught up with the day's calls: ${errText(err)}`)
      )
      : Promise.resolve();
  }

  get limits(): UsageLimits {
    return this.#o.limits;
  }

  /** The header a trusted proxy names the client's address in, when one is set. */
  get addressHeader(): string | null {
    return this.#o.addressHeader;
  }

  /** The deployment owner's key, when one is set. */
  get ownerKey(): string | null {
    return this.#o.ownerKey;
  }

  /**
   * Refuses a new run of `subject` (429, `Retry-After` the window's end) over a daily budget
   * or a runs-per-minute limit; otherwise counts it in the per-minute windows.
   */
  async admit(subject: UsageSubject): Promise<void> {
    if (!this.#limited) return;
    await this.#caughtUp;
    const daily = this.#applicable(subject, (s) => s.measure !== "runs");
    const counters = await this.#o.store.counters(daily.map(([, k]) => k));
    for (const [s, key] of daily) {
      const used = counters[key]![s.measure as keyof UsageCounter];
      if (used >= this.#o.limits[s.key]) throw this.#refusal(s, used);
    }
    const perMinute = this.#applicable(subject, (s) => s.measure === "runs");
    const max = Object.fromEntries(perMinute.map(([s, k]) => [k, this.#o.limits[s.key]]));
    const full = await this.#o.store.countRun(max);
    if (full) {
      const s = perMinute.find(([, k]) => k === full)![0];
      throw this.#refusal(s, this.#o.limits[s.key]);
    }
  }

  /**
   * Admits a run created without admission (a cron's firing) as it starts: over a limit, the
   * {@link UsageStop} it ends with (its error event names the limit), else null.
   */
  async admitStart(subject: UsageSubject): Promise<UsageStop | null> {
    try {
      await this.admit(subject);
      return null;
    } catch (err) {
      if (!(err instanceof AgentcliError) || err.status !== 429) throw err;
      return new UsageStop(`${err.message}. ${err.hint}`);
    }
  }

  /**
   * Starts metering a run: its model calls are recorded as they end when a daily budget
   * applies to it (so it stops once over), else kept for its end (see {@link RunUsage}).
   */
  startRun(run: MeteredRun): RunUsage {
    const stop = new AbortController();
    const writes = new Set<Promise<void>>();
    const budgeted = this.#limited && this.#applicable(run.subject, (s) => s.measure !== "runs").length > 0;
    if (!budgeted) return this.#deferredRun(run, stop.signal);
    // The call that crosses a budget keeps its answer; the run stops before its next model
    // call (the handler's start hook), as soon as the stream shows the crossing (no hook there:
    // the next call may be under way), or at its end (`settled`).
    let crossed: UsageStop | null = null;
    const stopNow = () => {
      if (crossed && !stop.signal.aborted) stop.abort(crossed);
    };
    const onCall = (call: ModelCall, now: boolean) => {
      const p = this.#record(run, call).then((over) => {
        crossed ??= over;
        if (now) stopNow();
      }).catch((err) => this.#o.log.warn(`run ${run.run_id}: its usage could not be recorded: ${errText(err)}`))
        .finally(() => writes.delete(p));
      writes.add(p);
      return p;
    };
    const settled = async () => {
      while (writes.size) await Promise.all([...writes]);
      stopNow();
    };
    const reader = new StreamUsageReader((call) => onCall(call, true));
    return {
      callbacks: [new UsageCallbacks((call) => onCall(call, false), stopNow)],
      observe: (ns, payload) => reader.observe(ns, payload),
      signal: stop.signal,
      settled,
      flush: settled,
      takeDeferred: () => null,
    };
  }

  /** A run no budget applies to: its calls are kept in memory for the statement recording its end. */
  #deferredRun(run: MeteredRun, signal: AbortSignal): RunUsage {
    let calls: UsageCall[] = [];
    const onCall = (call: ModelCall) => {
      calls.push(this.#row(run, call));
      return Promise.resolve();
    };
    const take = (): DeferredUsage | null => {
      if (!calls.length) return null;
      const taken = calls;
      calls = [];
      this.#recorded += taken.length;
      if (this.#recorded >= 500) {
        this.#recorded = 0;
        void this.#o.store.prune().catch(() => {});
      }
      const keys = this.#daily
        ? this.#applicable(run.subject, (s) => s.measure !== "runs", true).map(([, k]) => k)
        : [];
      return { calls: taken, keys: [...new Set(keys)] };
    };
    const reader = new StreamUsageReader(onCall);
    return {
      callbacks: [new UsageCallbacks(onCall)],
      observe: (ns, payload) => reader.observe(ns, payload),
      signal,
      settled: () => Promise.resolve(),
      flush: async () => {
        const taken = take();
        if (taken) await this.recordDeferred(run.run_id, taken);
      },
      takeDeferred: take,
    };
  }

  /** Records a run's calls kept for its end when its end was recorded without them (rolled back, handed over, failed). */
  async recordDeferred(runId: string, usage: DeferredUsage): Promise<void> {
    await this.#o.store.recordDeferred(usage).catch((err) =>
      this.#o.log.warn(`run ${runId}: its usage could not be recorded: ${errText(err)}`)
    );
  }

  /** Records one call and raises the counters; resolves the stop when a daily budget is now crossed. */
  async #record(run: MeteredRun, call: ModelCall): Promise<UsageStop | null> {
    await this.#caughtUp;
    const daily = this.#applicable(run.subject, (s) => s.measure !== "runs", true);
    const counters = await this.#o.store.record(this.#row(run, call), [...new Set(daily.map(([, k]) => k))]);
    if (++this.#recorded >= 500) {
      this.#recorded = 0;
      void this.#o.store.prune().catch(() => {});
    }
    for (const [s, key] of daily) {
      const max = this.#o.limits[s.key];
      const used = counters[key]?.[s.measure as keyof UsageCounter] ?? 0;
      if (max > 0 && used > max) {
        const e = agentcliError(UsageLimitCrossed, {
          limit: s.names,
          used: describeAmount(s, used),
          max: describeAmount(s, max),
          retry: describeWait(secondsToReset(s)),
          env: s.env,
        });
        return new UsageStop(`${e.message}. ${e.hint}`);
      }
    }
    return null;
  }

  /** One call's record, with its estimated cost. */
  #row(run: MeteredRun, call: ModelCall): UsageCall {
    const u = call.usage;
    return {
      run_id: run.run_id,
      thread_id: run.thread_id,
      assistant_id: run.assistant_id,
      user_key: run.subject.user,
      client_key: run.subject.client,
      provider: call.provider,
      model: call.model,
      input_tokens: u.input_tokens,
      output_tokens: u.output_tokens,
      total_tokens: u.total_tokens,
      cached_input_tokens: u.cached_input_tokens ?? 0,
      reasoning_tokens: u.reasoning_tokens ?? 0,
      cost_usd: this.#o.prices.cost(call.provider, call.model, u),
      estimated: call.estimated,
    };
  }

  /**
   * The limits of `subject` that `which` selects, each with its counter key. `all`: every
   * such counter, set or not (while one daily budget is set, all the day's counters are kept).
   */
  #applicable(
    subject: UsageSubject,
    which: (s: UsageLimitSetting) => boolean,
    all = false,
  ): Array<[UsageLimitSetting, string]> {
    const out: Array<[UsageLimitSetting, string]> = [];
    for (const s of USAGE_LIMIT_SETTINGS) {
      if (!which(s) || (!all && !(this.#o.limits[s.key] > 0))) continue;
      const key = counterKey(s, subject);
      if (key) out.push([s, key]);
    }
    return out;
  }

  #refusal(s: UsageLimitSetting, used: number) {
    const seconds = secondsToReset(s);
    const err = agentcliError(s.measure === "runs" ? RunRateLimited : UsageLimitReached, {
      limit: s.names,
      used: describeAmount(s, used),
      max: describeAmount(s, this.#o.limits[s.key]),
      retry: describeWait(seconds),
      env: s.env,
    }, { status: 429 });
    return Object.assign(err, { retryAfterSeconds: seconds });
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
