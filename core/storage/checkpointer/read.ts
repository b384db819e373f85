/**
 * The checkpointer's reads: the checkpoints matching a filter in one query, each with the
 * channel values its versions name (an appended list rebuilt from its base) and its pending
 * writes; checkpoints written before format 4 get their pending sends from their parent.
 */
import {
  type ChannelVersions,
  type Checkpoint,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  maxChannelVersion,
  TASKS,
} from "@langchain/langgraph-checkpoint";
import type { SqlExecutor } from "../sql.ts";
import type { CheckpointCodec } from "./codec.ts";
import { MAX_CHAIN, type RememberedLists } from "./lists.ts";

/** One row of a read: a checkpoint (kind 0), a channel value (1) or a pending write (2). */
interface ReadRow {
  kind: number;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  /** parent checkpoint id (0), channel (1), task id (2) */
  a: string | null;
  /** channel version (1), channel (2) */
  b: string | null;
  /** 1 only: the version whose value this one appends to */
  base: string | null;
  idx: number | null;
  task_path: string | null;
  type: string | null;
  data: Uint8Array | null;
  meta: Uint8Array | null;
  /** 0 only: the channel versions (null: the row holds its whole checkpoint, written before checkpoint_blobs) */
  versions: ChannelVersions | null;
}

/** A read's filter: `add` appends its clauses and their values. */
export interface Where {
  clauses: string[];
  params: unknown[];
}

/** What a read needs of the saver. */
export interface ReadContext {
  sql: SqlExecutor;
  codec: CheckpointCodec;
  /** Where a single checkpoint's lists are remembered, for the next put's appends. */
  lists: RememberedLists;
  /** The saver's next version (for a migrated TASKS channel with no versions). */
  nextVersion: () => number;
}

/** A decoded channel value and how many appended versions it was built from. */
type Value = { value: unknown; depth: number } | undefined;

export function add(where: Where, clause: string, value: unknown): void {
  where.params.push(value);
  where.clauses.push(clause.replace("?", `$${where.params.length}`));
}

/**
 * Reads the checkpoints matching `where` (newest first, at most `limit`) in one query: each
 * checkpoint row, the channel values its versions name (once each, however many
 * checkpoints share them), and its pending writes.
 */
export async function readCheckpoints(
  ctx: ReadContext,
  where: Where,
  limit: number | null,
): Promise<CheckpointTuple[]> {
  if (limit === 0) return [];
  const { rows } = await ctx.sql.query<ReadRow>(readStatement(where, limit), where.params);
  const checkpoints: ReadRow[] = [];
  const blobs = new Map<string, ReadRow>();
  const writes = new Map<string, ReadRow[]>();
  for (const r of rows) {
    const kind = Number(r.kind);
    if (kind === 0) checkpoints.push(r);
    else if (kind === 1) blobs.set(JSON.stringify([r.thread_id, r.checkpoint_ns, r.a, r.b]), r);
    else {
      const key = JSON.stringify([r.thread_id, r.checkpoint_ns, r.checkpoint_id]);
      const list = writes.get(key);
      if (list) list.push(r);
      else writes.set(key, [r]);
    }
  }
  // The order of the checkpoint query (the union drops it).
  checkpoints.sort((x, y) =>
    cmp(y.checkpoint_id!, x.checkpoint_id!) || cmp(y.thread_id, x.thread_id) || cmp(y.checkpoint_ns, x.checkpoint_ns)
  );
  const value = valueReader(ctx.codec, blobs);
  const tuples = await Promise.all(checkpoints.map(async (row) => {
    const checkpoint = await ctx.codec.load(row.type!, row.data!) as Checkpoint;
    if (row.versions) {
      await fillValues({ ctx, row, checkpoint, value, remember: checkpoints.length === 1 });
    }
    const own = (writes.get(JSON.stringify([row.thread_id, row.checkpoint_ns, row.checkpoint_id])) ?? [])
      .sort(byWriteOrder);
    const pendingWrites = await Promise.all(
      own.map(async (w) => [w.a!, w.b!, await ctx.codec.load(w.type!, w.data!)] as CheckpointPendingWrite),
    );
    const tuple: CheckpointTuple = {
      config: {
        configurable: {
          thread_id: row.thread_id,
          checkpoint_ns: row.checkpoint_ns,
          checkpoint_id: row.checkpoint_id,
        },
      },
      checkpoint,
      metadata: await ctx.codec.loadMetadata(row.meta!),
      pendingWrites,
    };
    if (row.a) {
      tuple.parentConfig = {
        configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.a },
      };
    }
    return tuple;
  }));
  await migratePendingSends(ctx, tuples);
  return tuples;
}

/**
 * The `checkpoint_blobs` row of one (thread, namespace, channel, version) of `k`, looked up by
 * its primary key. A plain join let the planner hash the whole table (it expects `k` to hold a
 * hundred rows or more, and the embedded engine never analyzes): two sequential scans of every
 * thread's values per read, so a run's cost grew with the runs the database held (bench/README.md);
 * `LIMIT 1` keeps the lookup a parameterized index scan (a subquery with a limit is not flattened).
 */
const BLOB_OF_K = `SELECT b.type, b.blob, b.base FROM checkpoint_blobs b WHERE b.thread_id = k.thread_id
           AND b.checkpoint_ns = k.checkpoint_ns AND b.channel = k.channel AND b.version = k.version LIMIT 1`;

function readStatement(where: Where, limit: number | null): string {
  const filter = where.clauses.length ? `WHERE ${where.clauses.join(" AND ")}` : "";
  return `WITH RECURSIVE c AS (
         SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, channel_versions
         FROM checkpoints ${filter} ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC${
    limit === null ? "" : ` LIMIT ${limit}`
  }
       ), k (thread_id, checkpoint_ns, channel, version) AS (
         SELECT c.thread_id, c.checkpoint_ns, v.key, v.value FROM c, jsonb_each_text(c.channel_versions) v
         UNION
         SELECT k.thread_id, k.checkpoint_ns, k.channel, bl.base FROM k, LATERAL (${BLOB_OF_K}) bl
         WHERE bl.base IS NOT NULL
       )
       SELECT 0 AS kind, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id AS a, NULL::text AS b, NULL::text AS base,
         NULL::integer AS idx, NULL::text AS task_path, type, checkpoint AS data, metadata AS meta, channel_versions AS versions FROM c
       UNION ALL
       SELECT 1, k.thread_id, k.checkpoint_ns, NULL, k.channel, k.version, bl.base, NULL, NULL, bl.type, bl.blob, NULL, NULL
         FROM k, LATERAL (${BLOB_OF_K}) bl
       UNION ALL
       SELECT 2, w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.channel, NULL, w.idx, w.task_path, w.type, w.value, NULL, NULL
         FROM checkpoint_writes w JOIN c USING (thread_id, checkpoint_ns, checkpoint_id)`;
}

/** Each stored version decoded once; an appended one is its base's value plus its items. */
function valueReader(codec: CheckpointCodec, blobs: Map<string, ReadRow>): (key: string) => Promise<Value> {
  const values = new Map<string, Promise<Value>>();
  const value = (key: string, seen = 0): Promise<Value> => {
    let v = values.get(key);
    if (!v) {
      const r = blobs.get(key);
      values.set(
        key,
        v = (async () => {
          if (!r || r.type === "empty" || seen > MAX_CHAIN * 2) return undefined;
          const own = await codec.load(r.type!, r.data!);
          if (r.base === null) return { value: own, depth: 0 };
          const base = await value(JSON.stringify([r.thread_id, r.checkpoint_ns, r.a, r.base]), seen + 1);
          if (!base || !Array.isArray(base.value) || !Array.isArray(own)) return undefined;
          return { value: base.value.concat(own), depth: base.depth + 1 };
        })(),
      );
    }
    return v;
  };
  return (key) => value(key);
}

/** Sets a checkpoint's versions and values from its row; with `remember`, its lists are remembered. */
async function fillValues(
  opts: {
    ctx: ReadContext;
    row: ReadRow;
    checkpoint: Checkpoint;
    value: (key: string) => Promise<Value>;
    remember: boolean;
  },
): Promise<void> {
  const { row, checkpoint } = opts;
  checkpoint.channel_versions = typeof row.versions === "string" ? JSON.parse(row.versions) : row.versions!;
  const channelValues: Record<string, unknown> = {};
  for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
    const v = await opts.value(JSON.stringify([row.thread_id, row.checkpoint_ns, channel, String(version)]));
    if (!v) continue;
    channelValues[channel] = v.value;
    // What a run goes on from: its next version of this list may append to it.
    if (opts.remember && Array.isArray(v.value)) {
      opts.ctx.lists.remember(JSON.stringify([row.thread_id, row.checkpoint_ns, channel]), {
        version: String(version),
        items: v.value.slice(),
        depth: v.depth,
      });
    }
  }
  checkpoint.channel_values = channelValues;
}

/**
 * Checkpoints before format 4 kept pending sends as writes to TASKS on their parent; they
 * become the TASKS channel's value (one more query, only when such checkpoints are read).
 */
async function migratePendingSends(ctx: ReadContext, tuples: CheckpointTuple[]): Promise<void> {
  const old = tuples.filter((t) => t.checkpoint.v < 4 && t.parentConfig);
  if (old.length === 0) return;
  const keys = old.map((t) => t.parentConfig!.configurable!);
  const { rows } = await ctx.sql.query<ReadRow>(
    `SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id AS a, w.idx, w.task_path, w.type, w.value AS data
       FROM checkpoint_writes w JOIN unnest($1::text[], $2::text[], $3::text[]) AS k (thread_id, checkpoint_ns, checkpoint_id)
         USING (thread_id, checkpoint_ns, checkpoint_id)
       WHERE w.channel = $4`,
    [keys.map((k) => k.thread_id), keys.map((k) => k.checkpoint_ns ?? ""), keys.map((k) => k.checkpoint_id), TASKS],
  );
  rows.sort(byWriteOrder);
  for (const t of old) {
    const p = t.parentConfig!.configurable!;
    const sends = await Promise.all(
      rows.filter((r) =>
        r.thread_id === p.thread_id && r.checkpoint_ns === (p.checkpoint_ns ?? "") &&
        r.checkpoint_id === p.checkpoint_id
      )
        .map((r) => ctx.codec.load(r.type!, r.data!)),
    );
    const versions = Object.values(t.checkpoint.channel_versions);
    t.checkpoint.channel_values[TASKS] = sends;
    t.checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : ctx.nextVersion();
  }
}

function byWriteOrder(x: ReadRow, y: ReadRow): number {
  return compareWritesSortKeys([x.task_path ?? "", x.a!, Number(x.idx)], [y.task_path ?? "", y.a!, Number(y.idx)]);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
