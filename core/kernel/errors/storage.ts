/**
 * The error catalogue: Storage (UNPROCESSABLE, REMOTE_FAILED, SERVICE_UNREACHABLE). Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** A search filter on fields that are encrypted at rest, so cannot be compared in SQL. */
export const SearchEncrypted = {
  name: "SearchEncrypted",
  code: "UNPROCESSABLE",
  title: "A search filters on fields that are encrypted at rest.",
  message: (v: { what: string; by: string; keys: string }) =>
    `Cannot search ${v.what} by ${v.by}: encrypted at rest (${v.keys}), so not searchable`,
  hint: "Filter on metadata keys that are not listed in LANGGRAPH_AES_JSON_KEYS.",
} as const satisfies ErrorData;

/** A store index names a field the item's value does not have. */
export const StoreIndexField = {
  name: "StoreIndexField",
  code: "UNPROCESSABLE",
  title: "A store item's index names a field its value does not have.",
  message: (v: { field: string }) => `Invalid store index: field "${v.field}" is not in the item's value`,
  hint: 'Name fields of the value: "$" (all of it), "a.b", "list[*].text"; or index: false.',
} as const satisfies ErrorData;

/** The embedding model of the store failed (HTTP 502). */
export const EmbeddingFailed = {
  name: "EmbeddingFailed",
  code: "REMOTE_FAILED",
  title: "The store's embedding model failed.",
  message: (v: { model: string; reason: string }) => `Cannot embed for the store with "${v.model}": ${v.reason}`,
  hint: "Check AGENTCLI_STORE_EMBEDDINGS and the provider's credentials and address.",
} as const satisfies ErrorData;

/** The embedding model answered, but not one vector per text (HTTP 502). */
export const EmbeddingCount = {
  name: "EmbeddingCount",
  code: "REMOTE_FAILED",
  title: "The store's embedding model did not return one vector per text.",
  message: (v: { model: string; vectors: number; texts: number }) =>
    `Cannot embed for the store with "${v.model}": it returned ${v.vectors} vectors for ${v.texts} texts`,
} as const satisfies ErrorData;

/** PostgreSQL or Redis cannot be reached at start-up within AGENTCLI_CONNECT_TIMEOUT_SECONDS. */
export const ServiceUnreachable = {
  name: "ServiceUnreachable",
  code: "SERVICE_UNREACHABLE",
  title: "PostgreSQL or Redis cannot be reached when the server starts.",
  message: (v: { service: string; address: string; variable: string; reason: string; seconds: number }) =>
    `Cannot connect to ${v.service} at ${v.address} (${v.variable}): ${v.reason} (tried for ${v.seconds} s)`,
  hint: (v: { service: string; variable: string; fallback: number }) =>
    `Check that ${v.service} is running and reachable from here and that ${v.variable} is right; AGENTCLI_CONNECT_TIMEOUT_SECONDS (default ${v.fallback}) sets how long the start-up keeps trying.`,
} as const satisfies ErrorData;

/** PostgreSQL dropped away while the server runs and did not come back in time (HTTP 503). */
export const DatabaseUnreachable = {
  name: "DatabaseUnreachable",
  code: "SERVICE_UNREACHABLE",
  title: "The database dropped away while the server runs.",
  message: (v: { reason: string; seconds: number }) =>
    `The database is unreachable (${v.reason}; retried for ${v.seconds} s)`,
  hint: (v: { retryAfter: number }) =>
    `Retry in ${v.retryAfter} s; the server keeps trying to reach PostgreSQL (AGENTCLI_DB_RETRY_SECONDS sets how long background work waits).`,
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const STORAGE_ERRORS: readonly ErrorData[] = [
  SearchEncrypted,
  StoreIndexField,
  EmbeddingFailed,
  EmbeddingCount,
  ServiceUnreachable,
  DatabaseUnreachable,
];
