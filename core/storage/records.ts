/**
 * The records of the Agent API as the storage returns them (the wire shapes of the
 * LangGraph Platform dialect), and the small row conversions they share.
 */
export type Json = Record<string, unknown>;
export type RunStatus = "pending" | "running" | "error" | "success" | "timeout" | "interrupted";
export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";
export type MultitaskStrategy = "reject" | "interrupt" | "rollback" | "enqueue";

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  config: Json;
  context: unknown;
  metadata: Json;
  name: string;
  description: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Json;
  status: ThreadStatus;
  values: unknown;
  interrupts: Record<string, unknown[]>;
  config: Json;
  error: unknown;
}

export interface Run {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: Json;
  kwargs: Json;
  multitask_strategy: MultitaskStrategy | null;
  cancel_reason: string | null;
  attempt: number;
}

/** Owner scoping: when set, only records whose `metadata.owner` equals it are visible. */
export interface Scope {
  owner?: string | null;
}

export function iso(v: unknown): string {
  return v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString();
}

/** Adds `metadata->>'owner' = $n` to a WHERE list when a scope owner is present. */
export function ownerClause(scope: Scope | undefined, params: unknown[], column = "metadata"): string | null {
  if (!scope?.owner) return null;
  params.push(scope.owner);
  return `${column}->>'owner' = $${params.length}`;
}

export function sortClause(
  asked: { sort_by?: string; sort_order?: string },
  { allowed, fallback }: { allowed: readonly string[]; fallback: string },
): string {
  const sortBy = asked.sort_by;
  const col = sortBy && allowed.includes(sortBy) ? sortBy : fallback;
  return `${col} ${asked.sort_order === "asc" ? "ASC" : "DESC"}`;
}
