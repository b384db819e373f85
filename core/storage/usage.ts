/**
 * Usage: the rows of a run's model calls (`usage_calls`: its run, thread, assistant, user, client
 * address key, provider and model, tokens, estimated cost; a call a row as it comes when a
 * budget applies to the run, else written with the run's end as one row per model and
 * estimate, its calls summed and counted in `calls`), and the counters budgets read
 * (`usage_counters`: tokens, cost and runs per key and UTC day or minute). Counters live in
 * the database, so every replica reads and raises the same ones: a budget is one budget.
 *
 * @example
 * await storage.usage.record(call, ["day:user:alice", "day:deployment"]);
 * const totals = await storage.usage.ofRun(runId);
 */
import type { SqlDriver, SqlExecutor } from "./sql.ts";

/** One model call's usage, as recorded. */
export interface UsageCall {
  run_id: string;
  thread_id: string | null;
  assistant_id: string | null;
  /** Who ran it: `user:<id>`, `owner` (the platform API key), `browser:<hash>` or `client:<hash>`. */
  user_key: string;
  /** The caller's client address key (hashed), for anonymous callers; null otherwise. */
  client_key: string | null;
  provider: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cached_input_tokens: number;
  reasoning_tokens: number;
  /** Estimated cost in USD from the model's prices; null when its prices are unknown. */
  cost_usd: number | null;
  /** True when the provider reported no usage and the tokens were counted from the text. */
  estimated: boolean;
}

/** A run's calls recorded with its end (no budget applied to them, so none was written as it came). */
export interface DeferredUsage {
  calls: readonly UsageCall[];
  /** The `day:` counters their tokens and cost raise. */
  keys: readonly string[];
}

const CALL_COLUMNS =
  `run_id, thread_id, assistant_id, user_key, client_key, provider, model, input_tokens, output_tokens,
  total_tokens, cached_input_tokens, reasoning_tokens, cost_usd, estimated, calls`;
const CALL_RECORD = `run_id text, thread_id text, assistant_id text, user_key text, client_key text, provider text,
  model text, input_tokens bigint, output_tokens bigint, total_tokens bigint, cached_input_tokens bigint,
  reasoning_tokens bigint, cost_usd float8, estimated boolean, calls integer`;

/**
 * The run's deferred usage as parts of the statement that records its end (../runs/end.ts):
 * its calls (a row per model and estimate: {@link perModel}) and the counters they raise, or
 * "" when there is none. Written even when the run was lost to another replica: the calls
 * were made (and paid) here.
 */
export function usageInsert(o: { usage: DeferredUsage | null | undefined; params: unknown[] }): string {
  const u = o.usage;
  if (!u?.calls.length) return "";
  const calls = `uc AS (INSERT INTO usage_calls (${CALL_COLUMNS}) SELECT ${CALL_COLUMNS}
    FROM jsonb_to_recordset($${o.params.push(JSON.stringify(perModel(u.calls)))}::jsonb) AS x(${CALL_RECORD})), `;
  if (!u.keys.length) return calls;
  const by = sumOf(u.calls);
  return `${calls}ucn AS (INSERT INTO usage_counters AS u (key, bucket, tokens, cost_usd, runs)
    SELECT k, date_trunc('day', now(), 'UTC'), $${o.params.push(by.tokens)}::bigint, $${
    o.params.push(by.cost_usd)
  }::float8, 0
    FROM unnest($${o.params.push(u.keys)}::text[]) AS k
    ON CONFLICT (key, bucket) DO UPDATE SET tokens = u.tokens + EXCLUDED.tokens, cost_usd = u.cost_usd + EXCLUDED.cost_usd), `;
}

/** A run's calls as rows: those of one model and estimate summed, `calls` their count. */
function perModel(calls: readonly UsageCall[]): Array<UsageCall & { calls: number }> {
  const rows = new Map<string, UsageCall & { calls: number }>();
  for (const c of calls) {
    const key = JSON.stringify([c.provider, c.model, c.estimated]);
    const row = rows.get(key);
    if (!row) {
      rows.set(key, { ...c, calls: 1 });
      continue;
    }
    row.calls++;
    row.input_tokens += c.input_tokens;
    row.output_tokens += c.output_tokens;
    row.total_tokens += c.total_tokens;
    row.cached_input_tokens += c.cached_input_tokens;
    row.reasoning_tokens += c.reasoning_tokens;
    row.cost_usd = row.cost_usd === null && c.cost_usd === null ? null : (row.cost_usd ?? 0) + (c.cost_usd ?? 0);
  }
  return [...rows.values()];
}

function sumOf(calls: readonly UsageCall[]): UsageCounter {
  return calls.reduce(
    (a, c) => ({ tokens: a.tokens + c.total_tokens, cost_usd: a.cost_usd + (c.cost_usd ?? 0), runs: 0 }),
    {
      tokens: 0,
      cost_usd: 0,
      runs: 0,
    },
  );
}

/** Usage summed over calls. */
export interface UsageTotals {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cached_input_tokens: number;
  reasoning_tokens: number;
  /** Summed over the calls whose model has prices (null when none had). */
  cost_usd: number | null;
}

/** A counter of one key in its current window. */
export interface UsageCounter {
  tokens: number;
  cost_usd: number;
  runs: number;
}

/** What usage can be grouped by. */
export type UsageGroup = "user" | "assistant" | "model" | "day" | "thread";

const GROUP_COLUMN: Record<UsageGroup, string> = {
  user: "user_key",
  assistant: "assistant_id",
  model: "provider || ':' || model",
  day: "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
  thread: "thread_id",
};

const TOTALS = `COALESCE(sum(calls), 0)::int AS calls, COALESCE(sum(input_tokens), 0)::float8 AS input_tokens,
  COALESCE(sum(output_tokens), 0)::float8 AS output_tokens, COALESCE(sum(total_tokens), 0)::float8 AS total_tokens,
  COALESCE(sum(cached_input_tokens), 0)::float8 AS cached_input_tokens,
  COALESCE(sum(reasoning_tokens), 0)::float8 AS reasoning_tokens, sum(cost_usd)::float8 AS cost_usd`;

/** Usage records and budget counters (`storage.usage`). */
export class UsageStore {
  readonly #sql: SqlDriver;
  constructor(sql: SqlDriver) {
    this.#sql = sql;
  }

  /**
   * Records one call and adds its tokens and cost to the `day:` counters `keys`; resolves
   * each key's counter after it (what budgets compare).
   */
  async record(call: UsageCall, keys: readonly string[]): Promise<Record<string, UsageCounter>> {
    const c = call;
    await this.#sql.query(
      `INSERT INTO usage_calls (run_id, thread_id, assistant_id, user_key, client_key, provider, model, input_tokens,
         output_tokens, total_tokens, cached_input_tokens, reasoning_tokens, cost_usd, estimated)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        c.run_id,
        c.thread_id,
        c.assistant_id,
        c.user_key,
        c.client_key,
        c.provider,
        c.model,
        c.input_tokens,
        c.output_tokens,
        c.total_tokens,
        c.cached_input_tokens,
        c.reasoning_tokens,
        c.cost_usd,
        c.estimated,
      ],
    );
    if (keys.length === 0) return {};
    return await this.#add(keys, { tokens: c.total_tokens, cost_usd: c.cost_usd ?? 0, runs: 0 });
  }

  /** Records a run's deferred calls on their own (its end was recorded without them: rolled back, or failed). */
  async recordDeferred(usage: DeferredUsage): Promise<void> {
    const params: unknown[] = [];
    const parts = usageInsert({ usage, params });
    if (!parts) return;
    await this.#sql.query(`WITH ${parts.replace(/, $/, "")} SELECT 1`, params);
  }

  /**
   * Brings today's `day:` counters up to the calls recorded today (a server with a daily
   * budget keeps them; one without writes only the calls): each counter becomes at least the
   * sum of its calls, so a budget set after a day's runs (a restart with a limit, a replica
   * that has one) finds what the day has spent. Never lowers a counter.
   */
  async catchUpDay(): Promise<void> {
    await this.#sql.query(
      `INSERT INTO usage_counters AS u (key, bucket, tokens, cost_usd, runs)
       SELECT k, date_trunc('day', now(), 'UTC'), sum(c.total_tokens), COALESCE(sum(c.cost_usd), 0), 0
       FROM usage_calls c, LATERAL (VALUES ('day:deployment'),
         (CASE WHEN c.user_key <> 'owner' THEN 'day:user:' || c.user_key END), ('day:client:' || c.client_key)) AS v(k)
       WHERE c.created_at >= date_trunc('day', now(), 'UTC') AND k IS NOT NULL
       GROUP BY k
       ON CONFLICT (key, bucket) DO UPDATE SET tokens = GREATEST(u.tokens, EXCLUDED.tokens),
         cost_usd = GREATEST(u.cost_usd, EXCLUDED.cost_usd)`,
    );
  }

  /** Adds to the counters of `keys` in their current window; resolves each one after. */
  async #add(keys: readonly string[], by: UsageCounter): Promise<Record<string, UsageCounter>> {
    const { rows } = await this.#sql.query<{ key: string; tokens: string; cost_usd: number; runs: number }>(
      `INSERT INTO usage_counters AS u (key, bucket, tokens, cost_usd, runs)
       SELECT k, date_trunc(CASE WHEN k LIKE 'minute:%' THEN 'minute' ELSE 'day' END, now(), 'UTC'),
         $2, $3, $4 FROM unnest($1::text[]) AS k
       ON CONFLICT (key, bucket) DO UPDATE SET tokens = u.tokens + EXCLUDED.tokens,
         cost_usd = u.cost_usd + EXCLUDED.cost_usd, runs = u.runs + EXCLUDED.runs
       RETURNING key, tokens, cost_usd, runs`,
      [keys, by.tokens, by.cost_usd, by.runs],
    );
    return Object.fromEntries(
      rows.map((r) => [r.key, { tokens: Number(r.tokens), cost_usd: Number(r.cost_usd), runs: Number(r.runs) }]),
    );
  }

  /** The counters of `keys` (`day:` and `minute:` ones) in their current windows (zero when nothing was counted yet). */
  async counters(keys: readonly string[]): Promise<Record<string, UsageCounter>> {
    const out: Record<string, UsageCounter> = Object.fromEntries(
      keys.map((k) => [k, { tokens: 0, cost_usd: 0, runs: 0 }]),
    );
    if (keys.length === 0) return out;
    const { rows } = await this.#sql.query<{ key: string; tokens: string; cost_usd: number; runs: number }>(
      `SELECT key, tokens, cost_usd, runs FROM usage_counters u, unnest($1::text[]) AS k
       WHERE u.key = k AND u.bucket = date_trunc(CASE WHEN k LIKE 'minute:%' THEN 'minute' ELSE 'day' END, now(), 'UTC')`,
      [keys],
    );
    for (const r of rows) out[r.key] = { tokens: Number(r.tokens), cost_usd: Number(r.cost_usd), runs: Number(r.runs) };
    return out;
  }

  /**
   * Counts a new run on each `minute:` key whose limit (`max`, by key) it stays within, all
   * or none: resolves null when every key had room (each counted), else the first key that
   * was full (nothing counted). One transaction, so replicas never both take the last place.
   */
  async countRun(max: Record<string, number>): Promise<string | null> {
    const keys = Object.keys(max);
    if (keys.length === 0) return null;
    const run = async (tx: SqlExecutor): Promise<string | null> => {
      const { rows } = await tx.query<{ key: string; runs: number }>(
        `INSERT INTO usage_counters AS u (key, bucket, runs)
         SELECT k, date_trunc('minute', now(), 'UTC'), 1 FROM unnest($1::text[]) AS k
         ON CONFLICT (key, bucket) DO UPDATE SET runs = u.runs + 1
         RETURNING key, runs`,
        [keys],
      );
      const over = rows.find((r) => Number(r.runs) > max[r.key]!);
      if (over) throw new OverLimit(over.key);
      return null;
    };
    try {
      return await this.#sql.transaction(run);
    } catch (err) {
      if (err instanceof OverLimit) return err.key;
      throw err;
    }
  }

  /** Deletes counters of windows older than two days (called now and then). */
  async prune(): Promise<void> {
    await this.#sql.query("DELETE FROM usage_counters WHERE bucket < now() - interval '2 days'");
  }

  /** The usage of one run (its subagents' calls included). */
  async ofRun(runId: string): Promise<UsageTotals> {
    const { rows } = await this.#sql.query<Record<string, number | null>>(
      `SELECT ${TOTALS} FROM usage_calls WHERE run_id = $1`,
      [runId],
    );
    return totals(rows[0]!);
  }

  /** The usage of each of `runIds` (runs without calls are left out). */
  async ofRuns(runIds: readonly string[]): Promise<Map<string, UsageTotals>> {
    if (runIds.length === 0) return new Map();
    const { rows } = await this.#sql.query<Record<string, number | null> & { run_id: string }>(
      `SELECT run_id, ${TOTALS} FROM usage_calls WHERE run_id = ANY($1::text[]) GROUP BY run_id`,
      [runIds],
    );
    return new Map(rows.map((r) => [r.run_id, totals(r)]));
  }

  /** The usage of every run of one thread. */
  async ofThread(threadId: string): Promise<UsageTotals> {
    const { rows } = await this.#sql.query<Record<string, number | null>>(
      `SELECT ${TOTALS} FROM usage_calls WHERE thread_id = $1`,
      [threadId],
    );
    return totals(rows[0]!);
  }

  /**
   * Usage grouped by `groupBy` (each row's `key` is the group's value, in order), between
   * `since` and `until` (ISO times; absent: no bound), of one user's calls when `user` is set.
   */
  async aggregate(
    q: { groupBy: UsageGroup; user?: string | null; since?: string; until?: string; limit: number },
  ): Promise<Array<UsageTotals & { key: string | null }>> {
    const params: unknown[] = [];
    const where: string[] = [];
    if (q.user) where.push(`user_key = $${params.push(q.user)}`);
    if (q.since) where.push(`created_at >= $${params.push(q.since)}::timestamptz`);
    if (q.until) where.push(`created_at < $${params.push(q.until)}::timestamptz`);
    const col = GROUP_COLUMN[q.groupBy];
    const { rows } = await this.#sql.query<Record<string, number | null> & { key: string | null }>(
      `SELECT ${col} AS key, ${TOTALS} FROM usage_calls ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       GROUP BY 1 ORDER BY ${q.groupBy === "day" ? "1 DESC" : "total_tokens DESC, 1"} LIMIT $${params.push(q.limit)}`,
      params,
    );
    return rows.map((r) => ({ key: r.key, ...totals(r) }));
  }
}

class OverLimit extends Error {
  readonly key: string;
  constructor(key: string) {
    super(`over the limit of ${key}`);
    this.key = key;
  }
}

function totals(r: Record<string, number | null>): UsageTotals {
  return {
    calls: Number(r.calls ?? 0),
    input_tokens: Number(r.input_tokens ?? 0),
    output_tokens: Number(r.output_tokens ?? 0),
    total_tokens: Number(r.total_tokens ?? 0),
    cached_input_tokens: Number(r.cached_input_tokens ?? 0),
    reasoning_tokens: Number(r.reasoning_tokens ?? 0),
    cost_usd: r.cost_usd === null || r.cost_usd === undefined ? null : Number(r.cost_usd),
  };
}
