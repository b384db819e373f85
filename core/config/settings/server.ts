/** The settings of docs/configuration.md's section Agent server (`dev`, `serve`). */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("server");

export const SERVER_SETTINGS: readonly Setting[] = [
  setting(
    "AGENTCLI_ROLE",
    "all",
    "`all` serves the API and runs the queue, `api` only serves, `worker` only runs the queue (`--role`).",
  ),
  setting("AGENTCLI_WORKERS", "4 per CPU (4 to 64)", "Runs a replica executes at once (`--workers`)."),
  setting("AGENTCLI_EXIT_WITH_PARENT", "unset", "`1`: `serve` shuts down when its standard input closes."),
  setting("AGENTCLI_MAX_CONNECTIONS", "1000", "Connections served at once."),
  setting(
    "AGENTCLI_MAX_CONNECTIONS_PER_CLIENT",
    "128",
    "Connections one client address may hold at once (IPv6 per /64); over it a 503 with `Retry-After`. `0`: no limit (behind a load balancer all clients share its addresses).",
  ),
  setting(
    "AGENTCLI_ALLOWED_HOSTS",
    "localhost names and IP addresses (any name for `serve` on a non-loopback bind)",
    "Comma-separated `Host` names served besides those: `name`, `.domain` for it and its subdomains, `*` for any. Other names get a 403 (DNS rebinding).",
  ),
  setting(
    "AGENTCLI_SHUTDOWN_SECONDS",
    "10",
    "On SIGTERM, seconds a replica gives its runs to finish before handing the rest back.",
  ),
  setting(
    "AGENTCLI_MEMORY_TUNING",
    "1",
    "`0` turns off the memory settings `dev` and `serve` start with (malloc arenas, V8 semi-space, WASM tiering, idle GC).",
  ),
  setting(
    "AGENTCLI_DEV_AUTH_BYPASS",
    "1",
    "`0` makes `dev` enforce real auth for requests without credentials (no `dev-user`).",
  ),
  setting(
    "AGENTCLI_STUDIO",
    "unset (on under `dev`, off under `serve`)",
    "`1` serves the studio at `/studio` under `serve` too; its API calls need the deployment's credentials (docs/studio.md).",
  ),
  setting("AGENTCLI_MEMORY", "memory-store", "The plugin whose `memory:backend` hook stores `/memories/`."),
  setting(
    "AGENTCLI_STREAM_HEARTBEAT_SECONDS",
    "15",
    "An SSE stream sends a `: heartbeat` comment this often so proxies keep idle streams open (0: none).",
  ),
  setting("AGENTCLI_RUN_TIMEOUT_SECONDS", "3600", "A run executing longer is stopped (0: no limit)."),
  setting(
    "AGENTCLI_THREAD_TTL_MINUTES",
    "unset (threads are kept)",
    "Minutes after its last update a thread without `ttl` is deleted.",
  ),
  setting(
    "AGENTCLI_STORE_TTL_MINUTES",
    "unset (items are kept)",
    "Minutes after its last write a store item without `ttl` is deleted.",
  ),
  setting(
    "AGENTCLI_STORE_TTL_REFRESH_ON_READ",
    "true",
    "Whether API reads refresh an item's TTL when they do not say `refresh_ttl`.",
  ),
  setting(
    "AGENTCLI_TTL_SWEEP_SECONDS",
    "60",
    "Seconds between sweeps of expired threads, store items and stream logs.",
  ),
  setting(
    "AGENTCLI_STREAM_RETENTION_SECONDS",
    "300",
    "Seconds a run's stream log is kept after the run ended, to join or resume its stream (0: until the next sweep).",
  ),
  setting(
    "AGENTCLI_STORE_EMBEDDINGS",
    "unset (no semantic search)",
    "An embedding model `provider:model` (e.g. `openai:text-embedding-3-small`) for semantic store search.",
  ),
  setting(
    "AGENTCLI_STORE_INDEX_FIELDS",
    "`$` (the whole value)",
    "Comma-separated fields embedded when a store put names none.",
  ),
];
