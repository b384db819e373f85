/**
 * The records of the Agent API as the storage returns them (the wire shapes of the
 * LangGraph Platform dialect), and the small row conversions they share.
 */
import { jsonbText } from "./jsonb.ts";
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
  /**
   * LangGraph custom auth's filters as a JSON containment (`metadata @> match`): only records
   * whose metadata holds it are visible.
   */
  match?: Record<string, unknown> | null;
}

export function iso(v: unknown): string {
  return v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString();
}

/** Adds `metadata->>'owner' = $n` (and a scope's `match`) to a WHERE list when a scope has them. */
export function ownerClause(scope: Scope | undefined, params: unknown[], column = "metadata"): string | null {
  const match = matchClause(scope, params, column);
  if (!scope?.owner) return match;
  params.push(scope.owner);
  const owner = `${column}->>'owner' = $${params.length}`;
  return match ? `${owner} AND ${match}` : owner;
}

/** `metadata @> $n::jsonb` for a scope's {@link Scope.match}, null without one. */
export function matchClause(scope: Scope | undefined, params: unknown[], column = "metadata"): string | null {
  if (!scope?.match || Object.keys(scope.match).length === 0) return null;
  params.push(jsonbText(scope.match));
  return `${column} @> $${params.length}::jsonb`;
}

export function sortClause(
  asked: { sort_by?: string; sort_order?: string },
  { allowed, fallback }: { allowed: readonly string[]; fallback: string },
): string {
  const sortBy = asked.sort_by;
  const col = sortBy && allowed.includes(sortBy) ? sortBy : fallback;
  return `${col} ${asked.sort_order === "asc" ? "ASC" : "DESC"}`;
}
