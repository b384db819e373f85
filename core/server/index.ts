/**
 * The public face of core/server/: what the other layers, bin/ and plugins/ import from it.
 * Written by issue 32's step 1 from the imports of the day; later steps point those imports here.
 * Layer order (docs/architecture.md): kernel -> config, bundle, auth, storage -> harness, engine -> server, platform -> testing -> cli.
 */
export { resolveAssistant } from "./deps.ts";
export type { ServerDeps } from "./deps.ts";
export { hostBundle } from "./host/agent-host.ts";
export type { GraphModule, Host } from "./host/agent-host.ts";
export {
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  limitConnectionsPerClient,
  MAX_CONNECTIONS_PER_CLIENT_VARIABLE,
} from "./host/client-connections.ts";
export type { ListenSettings } from "./host/listen-settings.ts";
export { idTaken, notFound } from "./http/errors.ts";
export { badText, MAX_JSON_DEPTH } from "./http/json-guard.ts";
export { checkMessages, tooManyRuns } from "./http/limits.ts";
export type { RunCreateBody } from "./http/schemas.ts";
export { apiDocsRoutes } from "./routes/api-docs.ts";
export { listenFirst } from "./host/early.ts";
export { parseGraphFlags } from "./host/agent-host.ts";
export { listenSettings } from "./host/listen-settings.ts";
export { listen } from "./host/node.ts";
export { CanarySplit, threadIdOf } from "./router/canary-split.ts";
export type { CanaryRecord, CanaryRoute } from "./router/canary-split.ts";
export { forwardRequest } from "./router/forward.ts";
export { pgCanaryThreads, prepareCanaryThreads } from "./router/pg-threads.ts";
export { startCanaryRouter } from "./router/router.ts";
export type { RouterOptions, RunningRouter } from "./router/router.ts";
export type { ForwardOptions } from "./router/forward.ts";
