/**
 * An assistant's update: a new version, numbered after the highest so far, that becomes the
 * latest (the assistant row takes its values).
 */
import type { Json } from "../records.ts";
import type { SqlExecutor } from "../sql.ts";
import type { AssistantInput, AssistantRow } from "../assistants.ts";
import { jsonbText } from "../jsonb.ts";

/** The patch to apply, and how metadata is stored (sealed with encryption at rest). */
export interface AssistantPatch {
  id: string;
  patch: Partial<Omit<AssistantInput, "assistant_id">>;
  metadata: (m: Json | undefined) => string;
}

/** Applies a patch in `tx` (the assistant's row locked); the row as updated, or null when it does not exist. */
export async function updateInTx(
  tx: SqlExecutor,
  { id, patch, metadata }: AssistantPatch,
): Promise<AssistantRow | null> {
  const { rows: cur } = await tx.query<AssistantRow>(
    "SELECT * FROM assistants WHERE assistant_id = $1 FOR UPDATE",
    [id],
  );
  const a = cur[0];
  if (!a) return null;
  const { rows: mv } = await tx.query<{ v: number }>(
    "SELECT max(version) AS v FROM assistant_versions WHERE assistant_id = $1",
    [id],
  );
  const version = Number(mv[0]?.v ?? a.version) + 1;
  const next = {
    graph_id: patch.graph_id ?? a.graph_id,
    config: patch.config ?? a.config,
    context: patch.context !== undefined ? patch.context : a.context,
    metadata: patch.metadata ? { ...a.metadata, ...patch.metadata } : a.metadata,
    name: patch.name ?? a.name,
    description: patch.description !== undefined ? patch.description : a.description,
  };
  // The version's values, as stored: the same in the version row and the assistant row.
  const values = [
    next.graph_id,
    jsonbText(next.config),
    jsonbText(next.context ?? null),
    metadata(next.metadata),
    next.name,
    next.description,
  ];
  await tx.query(
    `INSERT INTO assistant_versions (assistant_id, version, graph_id, config, context, metadata, name, description)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb, $7, $8)`,
    [id, version, ...values],
  );
  const { rows } = await tx.query<AssistantRow>(
    `UPDATE assistants SET graph_id = $2, config = $3::jsonb, context = $4::jsonb, metadata = $5::jsonb, name = $6, description = $7,
     version = $8, updated_at = now() WHERE assistant_id = $1 RETURNING *`,
    [id, ...values, version],
  );
  return rows[0]!;
}
