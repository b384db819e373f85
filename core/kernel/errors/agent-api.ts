/**
 * The error catalogue: requests of the Agent API that the routes refuse (UNPROCESSABLE,
 * CONFLICT): the request body, the thread state routes, the store. Entries of one area;
 * core/kernel/errors-data.ts lists every area (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** A body that does not match the route's schema; `detail` names each field and what is wrong. */
export const RequestBodyInvalid = {
  name: "RequestBodyInvalid",
  code: "UNPROCESSABLE",
  title: "A request body does not match the route's schema.",
  message: (v: { detail: string }) => `Invalid request: ${v.detail}`,
  hint: "Check the body against the route's schema in the API reference (/docs, /openapi.json).",
} as const satisfies ErrorData;

/** A body sent as JSON that does not parse. */
export const RequestBodyNotParsed = {
  name: "RequestBodyNotParsed",
  code: "UNPROCESSABLE",
  title: "A request body sent as JSON is not valid JSON.",
  message: "Invalid request: the body is not valid JSON",
  hint: "Send the body as one JSON value (Content-Type: application/json).",
} as const satisfies ErrorData;

/** A thread whose latest checkpoint holds a write the graph's reducers refuse. */
export const ThreadStateUnreadable = {
  name: "ThreadStateUnreadable",
  code: "CONFLICT",
  title: "A thread's checkpoint holds a write its graph cannot apply.",
  message: (v: { threadId: string; reason: string }) =>
    `Cannot read the state of thread "${v.threadId}": its checkpoint holds a write the graph cannot apply (${v.reason})`,
  hint:
    "Start a new run on the thread (it goes on from its last complete checkpoint), or read an earlier checkpoint from /threads/{thread_id}/history.",
} as const satisfies ErrorData;

/** A state update on a thread that has never run and names no graph. */
export const ThreadStateNoGraph = {
  name: "ThreadStateNoGraph",
  code: "CONFLICT",
  title: "A state update on a thread that has no graph yet.",
  message: (v: { threadId: string }) => `Cannot update the state of thread "${v.threadId}": it has no graph yet`,
  hint: "Run the thread once, or create it with a graph_id in its metadata.",
} as const satisfies ErrorData;

/** A state update on a thread with a run pending or running. */
export const ThreadStateRunInFlight = {
  name: "ThreadStateRunInFlight",
  code: "CONFLICT",
  title: "A state update on a thread that has a run in flight.",
  message: (v: { threadId: string; status: string }) =>
    `Cannot update the state of thread "${v.threadId}": it has a ${v.status} run`,
  hint: "Wait for the thread's runs to end (join them), or cancel them.",
} as const satisfies ErrorData;

/** A state update the graph refuses (values that are not its state, an unknown `as_node`). */
export const ThreadStateUpdateRefused = {
  name: "ThreadStateUpdateRefused",
  code: "UNPROCESSABLE",
  title: "The graph refuses a state update.",
  message: (v: { threadId: string; reason: string }) =>
    `Cannot update the state of thread "${v.threadId}": ${v.reason}`,
  hint: "Send values of the graph's state channels, and an as_node the graph has (or none).",
} as const satisfies ErrorData;

/** `PATCH /threads/{id}/state`: checkpoint metadata never changes here. */
export const CheckpointMetadataImmutable = {
  name: "CheckpointMetadataImmutable",
  code: "CONFLICT",
  title: "Checkpoint metadata cannot be patched.",
  message: "Cannot patch checkpoint metadata: this server keeps checkpoint metadata immutable",
  hint: "Patch the thread's metadata with PATCH /threads/{thread_id}.",
} as const satisfies ErrorData;

/** A thread created with `supersteps` but no graph to apply them with. */
export const SuperstepsNoGraph = {
  name: "SuperstepsNoGraph",
  code: "CONFLICT",
  title: "A thread is created with supersteps but names no graph.",
  message: (v: { threadId: string }) => `Cannot apply supersteps to thread "${v.threadId}": no graph`,
  hint: 'Set "graph_id" in the thread metadata.',
} as const satisfies ErrorData;

/** `keep_latest` pruning of a thread with a run in flight. */
export const ThreadPruneRunInFlight = {
  name: "ThreadPruneRunInFlight",
  code: "CONFLICT",
  title: "A thread with a run in flight cannot be pruned.",
  message: (v: { threadId: string }) => `Cannot prune thread "${v.threadId}": it has a run in progress`,
  hint: "Wait for the run to end, or cancel it.",
} as const satisfies ErrorData;

/** A store read's `refresh_ttl` that is neither true nor false. */
export const StoreRefreshTtlInvalid = {
  name: "StoreRefreshTtlInvalid",
  code: "UNPROCESSABLE",
  title: "A store read's refresh_ttl is neither true nor false.",
  message: (v: { value: string }) => `Invalid request: refresh_ttl must be true or false (got "${v.value}")`,
  hint: "Pass refresh_ttl=true or refresh_ttl=false, or leave it out for the server's setting.",
} as const satisfies ErrorData;

/** A store item put with an empty namespace. */
export const StoreNamespaceEmpty = {
  name: "StoreNamespaceEmpty",
  code: "UNPROCESSABLE",
  title: "A store item is put with an empty namespace.",
  message: "Invalid request: namespace must not be empty",
  hint: 'Give the item a namespace of one or more labels, e.g. ["notes"].',
} as const satisfies ErrorData;

/** A store item read without its key. */
export const StoreKeyRequired = {
  name: "StoreKeyRequired",
  code: "UNPROCESSABLE",
  title: "A store item is read without its key.",
  message: "Invalid request: key is required",
  hint: "Pass ?key=<the item's key> (and ?namespace=<labels joined by dots>).",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const AGENT_API_ERRORS: readonly ErrorData[] = [
  RequestBodyInvalid,
  RequestBodyNotParsed,
  ThreadStateUnreadable,
  ThreadStateNoGraph,
  ThreadStateRunInFlight,
  ThreadStateUpdateRefused,
  CheckpointMetadataImmutable,
  SuperstepsNoGraph,
  ThreadPruneRunInFlight,
  StoreRefreshTtlInvalid,
  StoreNamespaceEmpty,
  StoreKeyRequired,
];
