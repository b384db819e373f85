/**
 * The error catalogue: the Agent API server (ARGS_INVALID for `--graph`, PORT_IN_USE,
 * UNPROCESSABLE, FORBIDDEN). Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** A `--graph` value that is not `<id>=<module path>[:<export>]`. */
export const GraphFlagMalformed = {
  name: "GraphFlagMalformed",
  code: "ARGS_INVALID",
  title: "A --graph value is not <id>=<module path>[:<export>].",
  message: (v: { value: string }) => `Cannot read --graph "${v.value}": expected <id>=<module path>[:<export>]`,
  hint: "Example: --graph echo=./graphs/echo.ts or --graph echo=./graphs/echo.ts:echoGraph",
} as const satisfies ErrorData;

/** Two `--graph` values with the same id. */
export const GraphFlagRepeated = {
  name: "GraphFlagRepeated",
  code: "ARGS_INVALID",
  title: "Two --graph values have the same id.",
  message: (v: { id: string }) => `Cannot serve --graph "${v.id}" twice`,
  hint: "Give each --graph its own id.",
} as const satisfies ErrorData;

/** A `--graph` with the id of the project's agent, without `--replace-agent`. */
export const GraphFlagIsAgent = {
  name: "GraphFlagIsAgent",
  code: "ARGS_INVALID",
  title: "A --graph takes the id of the project's agent without --replace-agent.",
  message: (v: { id: string }) => `Cannot serve --graph "${v.id}": that id is the project's agent`,
  hint: "Choose another id, or pass --replace-agent to serve this graph instead of the project's agent.",
} as const satisfies ErrorData;

/** A `--graph` module that fails to import; `reason` is the first line of its error. */
export const GraphModuleUnloadable = {
  name: "GraphModuleUnloadable",
  code: "ARGS_INVALID",
  title: "A --graph module does not load.",
  message: (v: { id: string; path: string; reason: string }) =>
    `Cannot load --graph "${v.id}" from ${v.path}: ${v.reason}`,
  hint: "Check the module path and that the module loads (node <module>).",
} as const satisfies ErrorData;

/** A `--graph` module whose export is not a compiled graph, a StateGraph or a factory. */
export const GraphExportNotGraph = {
  name: "GraphExportNotGraph",
  code: "ARGS_INVALID",
  title: "A --graph module's export is not a graph.",
  message: (v: { id: string; path: string; name: string; found: string; exported: string }) =>
    `Cannot serve --graph "${v.id}": ${v.path} export "${v.name}" is ${v.found}, not a graph (the module exports ${v.exported})`,
  hint:
    "Export a compiled graph, a StateGraph, or a (async) function taking the run config and returning one; name another export with <module>:<export>.",
} as const satisfies ErrorData;

/** The port the server would listen on is taken. */
export const PortInUse = {
  name: "PortInUse",
  code: "PORT_IN_USE",
  title: "The port the server would listen on is taken by another process.",
  message: (v: { host: string; port: number }) => `Cannot listen on ${v.host}:${v.port}: the port is in use`,
  hint: "Stop the other process, or pick another port with --port <int>.",
} as const satisfies ErrorData;

/** A request URL with a `%` that does not start an escape of valid UTF-8. */
export const UrlEscapeMalformed = {
  name: "UrlEscapeMalformed",
  code: "UNPROCESSABLE",
  title: "A request URL has a malformed percent-escape.",
  message:
    "Invalid request: the URL has a malformed percent-escape (a % not followed by two hex digits of valid UTF-8)",
  hint: "Encode ids and query values with encodeURIComponent.",
} as const satisfies ErrorData;

/** A request URL (path or query) with text storage cannot hold; `problem` says which character. */
export const UrlTextInvalid = {
  name: "UrlTextInvalid",
  code: "UNPROCESSABLE",
  title: "A request URL holds a NUL character or an unpaired UTF-16 surrogate.",
  message: (v: { problem: string }) => `Invalid request: the URL ${v.problem}`,
  hint: "Remove the character from the id or query.",
} as const satisfies ErrorData;

/** A request body sent as something other than JSON (HTTP 415: the call site passes the status). */
export const BodyNotJson = {
  name: "BodyNotJson",
  code: "UNPROCESSABLE",
  title: "A request body is not sent as JSON.",
  message: (v: { contentType: string }) =>
    `Cannot read the request body: its content type is ${v.contentType ? `"${v.contentType}"` : "missing"}, not JSON`,
  hint: "Send the body as JSON with the header Content-Type: application/json.",
} as const satisfies ErrorData;

/** A string in a request body that storage cannot hold; `where` names it, `problem` the character. */
export const BodyTextInvalid = {
  name: "BodyTextInvalid",
  code: "UNPROCESSABLE",
  title: "A string in a request body holds a NUL character or an unpaired UTF-16 surrogate.",
  message: (v: { where: string; problem: string }) => `Invalid request: ${v.where} ${v.problem}`,
  hint: "Remove the character (text is stored as UTF-8 without NUL bytes).",
} as const satisfies ErrorData;

/** A key of an object in a request body that storage cannot hold. */
export const BodyKeyInvalid = {
  name: "BodyKeyInvalid",
  code: "UNPROCESSABLE",
  title: "A key in a request body holds a NUL character or an unpaired UTF-16 surrogate.",
  message: (v: { where: string; problem: string }) => `Invalid request: a key in ${v.where} ${v.problem}`,
  hint: "Remove the character from the key.",
} as const satisfies ErrorData;

/** A request body that nests deeper than the server reads. */
export const BodyTooDeep = {
  name: "BodyTooDeep",
  code: "UNPROCESSABLE",
  title: "A request body nests deeper than the server reads.",
  message: (v: { where: string; max: number }) => `Invalid request: ${v.where} nests deeper than ${v.max} levels`,
  hint: "Send a flatter value.",
} as const satisfies ErrorData;

/** A chat message of a run's input or a state update that LangChain cannot read; `field` names it. */
export const MessageShapeInvalid = {
  name: "MessageShapeInvalid",
  code: "UNPROCESSABLE",
  title: "A chat message in a request is not one LangChain can read.",
  message: (v: { field: string; problem: string }) => `Invalid request: ${v.field}: ${v.problem}`,
  hint:
    'Send each message as an object with a "role" ("user", "human", "assistant", "ai", "system", "developer", "tool") and a "content" (a string or an array of content blocks), e.g. {"role": "user", "content": "Hi"}.',
} as const satisfies ErrorData;

/** A change to one of the deployment's default assistants, which come from the project. */
export const DefaultAssistantReadOnly = {
  name: "DefaultAssistantReadOnly",
  code: "FORBIDDEN",
  title: "A request changes one of the deployment's default assistants.",
  message: (v: { action: string; id: string; name: string }) =>
    `Cannot ${v.action} assistant "${v.id}": it is the deployment's default assistant ("${v.name}"), which comes from the project`,
  hint: (v: { graphId: string }) =>
    `Create your own copy with POST /assistants {"graph_id": "${v.graphId}"} and change that, or change the project and redeploy.`,
} as const satisfies ErrorData;

/** `AGENTCLI_STUDIO=1` under `serve` with an identity provider that lets anyone in: the studio would be open. */
export const StudioNeedsAuth = {
  name: "StudioNeedsAuth",
  code: "ENV_INVALID",
  title: "The studio is enabled on a deployment whose auth lets anyone in.",
  message: (v: { provider: string }) =>
    `Cannot serve the studio at /studio: auth provider "${v.provider}" accepts requests without credentials, so anyone could read and change every thread`,
  hint:
    "Unset AGENTCLI_STUDIO, or use an [auth] provider that signs users in (or none: then the platform API key protects the API).",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const SERVER_ERRORS: readonly ErrorData[] = [
  GraphFlagMalformed,
  GraphFlagRepeated,
  GraphFlagIsAgent,
  GraphModuleUnloadable,
  GraphExportNotGraph,
  PortInUse,
  UrlEscapeMalformed,
  UrlTextInvalid,
  BodyNotJson,
  BodyTextInvalid,
  BodyKeyInvalid,
  BodyTooDeep,
  MessageShapeInvalid,
  DefaultAssistantReadOnly,
  StudioNeedsAuth,
];
