/**
 * The scope key -> sandbox mapping (table `sandboxes`): the statements of the sandbox manager
 * (core/harness/sandbox/manager.ts, which says how keys are claimed, attached and stopped).
 * A row is keyed by (scope key, backend); `creating` rows are claims with a lease.
 *
 * @example
 * const records = new SandboxRecords(sql);
 * const row = await records.get("thread:t1", "local");
 */
import type { SqlExecutor } from "./sql.ts";

/** A mapping as the manager reads it to attach or create. */
export interface SandboxRecord {
  scope_key: string;
  sandbox_id: string | null;
  status: "creating" | "ready" | "stopped";
  thread_id: string | null;
  /** A `creating` claim whose lease has not run out. */
  claim_live: boolean;
}

/** A claim on a key's sandbox being created: the key, its backend and the claim's token. */
export interface SandboxClaim {
  key: string;
  backend: string;
  token: string;
}

/** The sandbox mappings of one database. */
export class SandboxRecords {
  readonly #sql: SqlExecutor;
  constructor(sql: SqlExecutor) {
    this.#sql = sql;
  }

  /** The mapping of a key on a backend, or null. */
  async get(key: string, backend: string): Promise<SandboxRecord | null> {
    const { rows } = await this.#sql.query<SandboxRecord>(
      "SELECT scope_key, sandbox_id, status, thread_id, (claimed_until > now()) AS claim_live FROM sandboxes WHERE scope_key = $1 AND backend = $2",
      [key, backend],
    );
    return rows[0] ?? null;
  }

  /** Marks a use of a ready sandbox (the idle clock); false when it is no longer the key's ready sandbox. */
  async touch(key: string, backend: string, sandboxId: string): Promise<boolean> {
    const { rowCount } = await this.#sql.query(
      "UPDATE sandboxes SET last_used_at = now() WHERE scope_key = $1 AND backend = $2 AND sandbox_id = $3 AND status = 'ready' RETURNING 1",
      [key, backend, sandboxId],
    );
    return rowCount > 0;
  }

  /** Marks a resumed sandbox ready (and used now). */
  async resumed(key: string, backend: string, sandboxId: string): Promise<void> {
    await this.#sql.query(
      "UPDATE sandboxes SET status = 'ready', last_used_at = now() WHERE scope_key = $1 AND backend = $2 AND sandbox_id = $3",
      [key, backend, sandboxId],
    );
  }

  /** Forgets one sandbox of a key (it vanished at the provider). */
  async forget(key: string, backend: string, sandboxId: string): Promise<void> {
    await this.#sql.query("DELETE FROM sandboxes WHERE scope_key = $1 AND backend = $2 AND sandbox_id = $3", [
      key,
      backend,
      sandboxId,
    ]);
  }

  /** Forgets a key's mapping on a backend, whatever its sandbox. */
  async forgetKey(key: string, backend: string): Promise<void> {
    await this.#sql.query("DELETE FROM sandboxes WHERE scope_key = $1 AND backend = $2", [key, backend]);
  }

  /** The mappings of a thread, on every backend. */
  async ofThread(threadId: string): Promise<Array<{ scope_key: string; backend: string; sandbox_id: string | null }>> {
    const { rows } = await this.#sql.query<{ scope_key: string; backend: string; sandbox_id: string | null }>(
      "SELECT scope_key, backend, sandbox_id FROM sandboxes WHERE thread_id = $1",
      [threadId],
    );
    return rows;
  }

  /** Marks `stopped` the ready sandboxes of a backend unused for `idleMs`; returns them (one replica gets each). */
  async stopIdle(
    backend: string,
    idleMs: number,
  ): Promise<Array<{ scope_key: string; sandbox_id: string; thread_id: string | null }>> {
    const { rows } = await this.#sql.query<{ scope_key: string; sandbox_id: string; thread_id: string | null }>(
      `UPDATE sandboxes SET status = 'stopped' WHERE backend = $1 AND status = 'ready' AND last_used_at < now() - ($2 * interval '1 millisecond')
       RETURNING scope_key, sandbox_id, thread_id`,
      [backend, idleMs],
    );
    return rows;
  }

  /**
   * Claims a key to create its sandbox (a `creating` row with a lease of `leaseMs`, or taking
   * over a claim whose lease ran out); false when another holds it or it is created.
   */
  async claim(
    { key, backend, token, threadId, leaseMs }: SandboxClaim & { threadId: string | null; leaseMs: number },
  ): Promise<boolean> {
    const { rowCount } = await this.#sql.query(
      `INSERT INTO sandboxes (scope_key, backend, status, thread_id, claim_token, claimed_until)
       VALUES ($1, $2, 'creating', $3, $4, now() + ($5 * interval '1 millisecond'))
       ON CONFLICT (scope_key, backend) DO UPDATE SET claim_token = EXCLUDED.claim_token, claimed_until = EXCLUDED.claimed_until
         WHERE sandboxes.status = 'creating' AND sandboxes.claimed_until <= now()
       RETURNING 1`,
      [key, backend, threadId, token, leaseMs],
    );
    return rowCount > 0;
  }

  /** Records the sandbox created under a claim; false when the claim is gone (its thread was deleted meanwhile). */
  async created({ key, backend, token }: SandboxClaim, sandboxId: string): Promise<boolean> {
    const { rowCount } = await this.#sql.query(
      "UPDATE sandboxes SET sandbox_id = $4, status = 'ready', claim_token = NULL, claimed_until = NULL, last_used_at = now() WHERE scope_key = $1 AND backend = $2 AND claim_token = $3",
      [key, backend, token, sandboxId],
    );
    return rowCount > 0;
  }

  /** Drops a claim whose creation failed. */
  async unclaim(key: string, backend: string, token: string): Promise<void> {
    await this.#sql.query("DELETE FROM sandboxes WHERE scope_key = $1 AND backend = $2 AND claim_token = $3", [
      key,
      backend,
      token,
    ]);
  }

  /** The sandboxes created for a key (any backend), or for every key when none is given: for tests and operators. */
  async list(key?: string): Promise<Array<{ scope_key: string; sandbox_id: string }>> {
    const params = key === undefined ? [] : [key];
    const { rows } = await this.#sql.query<{ scope_key: string; sandbox_id: string }>(
      `SELECT scope_key, sandbox_id FROM sandboxes WHERE sandbox_id IS NOT NULL${
        key === undefined ? "" : " AND scope_key = $1"
      }`,
      params,
    );
    return rows;
  }
}
