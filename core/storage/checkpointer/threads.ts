/**
 * The checkpointer's statements over a whole thread: delete it, keep only its latest
 * checkpoints, copy it, roll it back to a time; and the channel values left unreferenced.
 */
import type { SqlExecutor } from "../sql.ts";

export async function deleteThreadRows(sql: SqlExecutor, threadId: string): Promise<void> {
  await sql.query(
    `WITH a AS (DELETE FROM checkpoints WHERE thread_id = $1), b AS (DELETE FROM checkpoint_blobs WHERE thread_id = $1)
       DELETE FROM checkpoint_writes WHERE thread_id = $1`,
    [threadId],
  );
}

/** Keeps only the latest checkpoint of each namespace of a thread, with its writes and the values it needs. */
export async function keepLatestRows(sql: SqlExecutor, threadId: string): Promise<void> {
  const latest =
    "(SELECT max(l.checkpoint_id) FROM checkpoints l WHERE l.thread_id = $1 AND l.checkpoint_ns = x.checkpoint_ns)";
  await sql.query(
    `DELETE FROM checkpoint_writes x WHERE x.thread_id = $1 AND x.checkpoint_id IS DISTINCT FROM ${latest}`,
    [threadId],
  );
  await sql.query(`DELETE FROM checkpoints x WHERE x.thread_id = $1 AND x.checkpoint_id <> ${latest}`, [
    threadId,
  ]);
  await dropUnreferencedValues(sql, threadId);
}

/** Copies every checkpoint, channel value and write of one thread to another. */
export async function copyThreadRows(sql: SqlExecutor, fromThreadId: string, toThreadId: string): Promise<void> {
  await sql.query(
    `WITH a AS (
         INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, metadata_json, channel_versions, created_at)
         SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata,
           jsonb_set(metadata_json, '{thread_id}', to_jsonb($2::text)), channel_versions, created_at FROM checkpoints WHERE thread_id = $1
       ), b AS (
         INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob, base)
         SELECT $2, checkpoint_ns, channel, version, type, blob, base FROM checkpoint_blobs WHERE thread_id = $1
       )
       INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
       SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path FROM checkpoint_writes WHERE thread_id = $1`,
    [fromThreadId, toThreadId],
  );
}

/** Deletes every checkpoint of a thread written since `since`, with their writes and the values left unreferenced. */
export async function deleteRowsSince(sql: SqlExecutor, threadId: string, since: string): Promise<void> {
  await sql.query(
    `WITH gone AS (
         DELETE FROM checkpoints WHERE thread_id = $1 AND created_at >= $2::timestamptz RETURNING checkpoint_ns, checkpoint_id
       )
       DELETE FROM checkpoint_writes w USING gone
       WHERE w.thread_id = $1 AND w.checkpoint_ns = gone.checkpoint_ns AND w.checkpoint_id = gone.checkpoint_id`,
    [threadId, since],
  );
  await dropUnreferencedValues(sql, threadId);
}

/** Deletes a thread's channel values that no checkpoint names, and no value that stays appends to. */
async function dropUnreferencedValues(sql: SqlExecutor, threadId: string): Promise<void> {
  // Values stay while a checkpoint names them or a value that stays appends to them.
  await sql.query(
    `WITH RECURSIVE live (checkpoint_ns, channel, version) AS (
         SELECT c.checkpoint_ns, v.key, v.value FROM checkpoints c, jsonb_each_text(c.channel_versions) v WHERE c.thread_id = $1
         UNION
         SELECT bl.checkpoint_ns, bl.channel, bl.base FROM checkpoint_blobs bl JOIN live USING (checkpoint_ns, channel, version)
         WHERE bl.thread_id = $1 AND bl.base IS NOT NULL
       )
       DELETE FROM checkpoint_blobs b WHERE b.thread_id = $1
         AND NOT EXISTS (SELECT 1 FROM live WHERE live.checkpoint_ns = b.checkpoint_ns AND live.channel = b.channel AND live.version = b.version)`,
    [threadId],
  );
}
