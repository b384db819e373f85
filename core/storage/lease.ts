/**
 * Leases: "exactly one replica does this" across every process on one database. A lease is
 * a named row held by one holder until a time (database time, so replicas' clocks never
 * matter); the holder renews it while it works, and when the holder dies the lease expires
 * and another replica takes it. Runs use the same idea on their own rows (`runs.lease_holder`,
 * `runs.lease_until`, ./runs.ts); anything else (a cron tick, a sweeper) uses a named lease here.
 *
 * @example
 * const leases = new LeaseStore(sql);                // holder: this process (replicaId())
 * if (await leases.acquire("sweep:ttl", 30_000)) {   // false: another replica holds it
 *   try { await sweep(); } finally { await leases.release("sweep:ttl"); }
 * }
 */
import { hostname } from "node:os";
import process from "node:process";
import type { SqlExecutor } from "./sql.ts";

let own: string | null = null;

/** This process's holder id (`<host>:<pid>:<random>`), the same for every lease it takes. */
export function replicaId(): string {
  own ??= `${safeHostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  return own;
}

function safeHostname(): string {
  try {
    return hostname() || "host";
  } catch {
    return "host";
  }
}

/** A lease as stored: who holds it, until when. */
export interface LeaseInfo {
  name: string;
  holder: string;
  until: string;
}

/** Named leases in the `leases` table (server migration 4). */
export class LeaseStore {
  readonly #sql: SqlExecutor;
  readonly holder: string;

  /** `holder`: who takes the leases (default {@link replicaId}; tests give several in one process). */
  constructor(sql: SqlExecutor, holder: string = replicaId()) {
    this.#sql = sql;
    this.holder = holder;
  }

  /**
   * Takes `name` for `ttlMs` when it is free, expired, or held by this holder already
   * (then it is extended). True when this holder has it now.
   */
  async acquire(name: string, ttlMs: number): Promise<boolean> {
    const { rows } = await this.#sql.query<{ holder: string }>(
      `INSERT INTO leases (name, holder, until) VALUES ($1, $2, now() + make_interval(secs => $3::float8))
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until
         WHERE leases.until < now() OR leases.holder = EXCLUDED.holder
       RETURNING holder`,
      [name, this.holder, ttlMs / 1000],
    );
    return rows[0]?.holder === this.holder;
  }

  /** Extends the leases of `names` this holder still has; returns those (a missing one was lost). */
  async renew(names: readonly string[], ttlMs: number): Promise<string[]> {
    if (!names.length) return [];
    const { rows } = await this.#sql.query<{ name: string }>(
      "UPDATE leases SET until = now() + make_interval(secs => $3::float8) WHERE name = ANY($1::text[]) AND holder = $2 RETURNING name",
      [names, this.holder, ttlMs / 1000],
    );
    return rows.map((r) => r.name);
  }

  /** Gives `name` up (when this holder has it), so another replica need not wait for it to expire. */
  async release(name: string): Promise<void> {
    await this.#sql.query("DELETE FROM leases WHERE name = $1 AND holder = $2", [name, this.holder]);
  }

  /** Who holds `name` now; null when nobody does (free or expired). */
  async get(name: string): Promise<LeaseInfo | null> {
    const { rows } = await this.#sql.query<{ name: string; holder: string; until: Date }>(
      "SELECT name, holder, until FROM leases WHERE name = $1 AND until >= now()",
      [name],
    );
    const r = rows[0];
    return r ? { name: r.name, holder: r.holder, until: new Date(r.until).toISOString() } : null;
  }
}
