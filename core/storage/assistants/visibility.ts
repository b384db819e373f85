/**
 * Which assistants a caller sees, and the lookup of what a run names: by id, else the
 * deployment's system assistant of that graph id or name, among what the caller sees;
 * and the check, inside a statement of the caller's, that a remembered lookup is current.
 */
import { type Assistant, matchClause, type Scope } from "../records.ts";

/**
 * Which assistants a caller sees: with an owner, their own and the deployment's default
 * (system) assistants; `systemOnly` (public documents such as the agent card) only the latter;
 * neither (no identity at all), every assistant.
 */
export interface AssistantScope extends Scope {
  systemOnly?: boolean;
}

export const SYSTEM = "metadata->>'created_by' = 'system' AND NOT metadata ? 'owner'";

/** True for the deployment's default assistants, which the server creates from the project and nobody may modify. */
export function isSystemAssistant(a: Pick<Assistant, "metadata">): boolean {
  return a.metadata.created_by === "system" && !("owner" in a.metadata);
}

/** The visibility condition of a scope (null: everything), its parameters pushed onto `params`. */
export function visible(scope: AssistantScope | undefined, params: unknown[]): string | null {
  const match = matchClause(scope, params);
  const and = match ? ` AND ${match}` : "";
  if (scope?.systemOnly) return `(${SYSTEM})${and}`;
  if (!scope?.owner) return match;
  return `(metadata->>'owner' = $${params.push(scope.owner)} OR (${SYSTEM}))${and}`;
}

/** A remembered assistant lookup, with the row version it read (see AssistantStore.resolveHint). */
export interface AssistantHint {
  readonly key: string;
  readonly scope: AssistantScope | undefined;
  readonly assistant: Assistant;
  /** The row's `xmin`: any update (or a delete and a new row) changes it. */
  readonly version: string;
}

/** The key of a remembered lookup: who may see it (system only, an owner, anyone) and what was looked up. */
export function hintKey(key: string, scope: AssistantScope | undefined): string {
  const match = scope?.match ? JSON.stringify(scope.match) : "";
  return `${scope?.systemOnly ? "\u0001" : (scope?.owner ?? "")}\u0002${match}\u0000${key}`;
}

/**
 * The lookup `resolve` runs: what `key` names among what `scope` sees, by id first, then graph
 * id, then name; with `rowVersion`, the row's `xmin` too (as `row_version`).
 */
export function lookup(
  key: string,
  scope: AssistantScope | undefined,
  rowVersion = false,
): { text: string; params: unknown[] } {
  const params: unknown[] = [key];
  const vis = visible(scope, params);
  const text = `SELECT *${
    rowVersion ? ", xmin::text AS row_version" : ""
  } FROM assistants WHERE (assistant_id = $1 OR ((graph_id = $1 OR name = $1) AND ${SYSTEM}))${vis ? ` AND ${vis}` : ""}
       ORDER BY (assistant_id = $1) DESC, (graph_id = $1) DESC, created_at LIMIT 1`;
  return { text, params };
}

/**
 * A condition, for a statement of the caller's, that is true only when the lookup `hint`
 * remembers still resolves to the same row, unchanged: the same query as `resolve`, in the
 * statement's snapshot. Its parameters are pushed onto `params`.
 */
export function currentCheck(hint: AssistantHint, params: unknown[]): string {
  const key = `$${params.push(hint.key)}::text`;
  const vis = visible(hint.scope, params);
  return `((SELECT assistant_id || ':' || xmin::text FROM assistants WHERE (assistant_id = ${key} OR ((graph_id = ${key} OR name = ${key}) AND ${SYSTEM}))${
    vis ? ` AND ${vis}` : ""
  }
     ORDER BY (assistant_id = ${key}) DESC, (graph_id = ${key}) DESC, created_at LIMIT 1) IS NOT DISTINCT FROM $${
    params.push(`${hint.assistant.assistant_id}:${hint.version}`)
  }::text)`;
}
