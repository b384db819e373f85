/**
 * A run's row and its stored forms: what the run store's statements read and write (metadata
 * and kwargs sealed with encryption at rest), and the types of a run being created or claimed.
 */
import type { AtRestEncryption } from "../encryption.ts";
import type { SqlDriver } from "../sql.ts";
import { iso, type Json, type MultitaskStrategy, type Run } from "../records.ts";
import { jsonbText } from "../jsonb.ts";

export interface RunRow extends Omit<Run, "created_at" | "updated_at"> {
  created_at: Date;
  updated_at: Date;
  lease_holder?: string | null;
}

export const toRun = (r: RunRow, enc: AtRestEncryption | null): Run => ({
  run_id: r.run_id,
  thread_id: r.thread_id,
  assistant_id: r.assistant_id,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  status: r.status,
  metadata: enc ? enc.openKeys(r.metadata) : r.metadata,
  kwargs: enc ? enc.openJson(r.kwargs) : r.kwargs,
  multitask_strategy: r.multitask_strategy,
  cancel_reason: r.cancel_reason ?? null,
  attempt: Number(r.attempt),
});

/**
 * A claimed run, with what the executor needs of its assistant and (from `claim`) its
 * thread's metadata, read in the same statement.
 */
export type ClaimedRun = Run & {
  assistant: { graph_id: string; config: Json; context: unknown } | null;
  threadMetadata?: Json;
  /** The thread had no checkpoint when the run was claimed (the statement that claimed it says so): its first read of one is skipped. */
  threadEmpty?: boolean;
};

export interface RunInput {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  metadata: Json;
  kwargs: Json;
  multitask_strategy: MultitaskStrategy | null;
  after_seconds?: number;
}

/** A running run another replica held whose lease expired, now held here (see {@link RunStore.takeOver}). */
export type TakenRun = ClaimedRun & { previous_holder: string | null };

/** What the run store's statements need of it (read at each call: `leaseSeconds` can change). */
export interface RunsContext {
  sql: SqlDriver;
  enc: AtRestEncryption | null;
  /** Who holds the leases of the runs this store claims. */
  holder: string;
  /** Seconds a claimed run's lease lasts before it must be renewed. */
  leaseSeconds: number;
  /** The revision of the server this store belongs to (recorded on the runs it creates), or null (./revisions.ts). */
  revision: string | null;
}

/**
 * The first parameters of a statement that inserts a run, in order: `$1` run id, `$2` thread,
 * `$3` assistant, `$4` metadata and `$5` kwargs as stored, `$6` multitask strategy, `$7` delay.
 */
export function runParams(r: RunInput, enc: AtRestEncryption | null): unknown[] {
  return [
    r.run_id,
    r.thread_id,
    r.assistant_id,
    jsonbText(enc ? enc.sealKeys(r.metadata) : r.metadata),
    jsonbText(enc ? enc.sealJson(r.kwargs) : r.kwargs),
    r.multitask_strategy,
    r.after_seconds ?? 0,
  ];
}

/** A thread metadata patch as stored. */
export function storedPatch(patch: Json, enc: AtRestEncryption | null): string {
  return jsonbText(enc ? enc.sealKeys(patch) : patch);
}

/** The stored form of a JSON state column (values, interrupts, error). */
export function storedState(value: unknown, enc: AtRestEncryption | null): string {
  return jsonbText(enc && value !== null && value !== undefined ? enc.sealJson(value) : value ?? null);
}
