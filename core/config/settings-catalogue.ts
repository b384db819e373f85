/**
 * Every environment variable agentcli reads or sets, one line each: name, default, meaning.
 * `docs/configuration.md` is generated from this list (`node scripts/gen-configuration.ts`),
 * and `tests/toolchain/configuration.test.ts` checks it against every `AGENTCLI_*` name in
 * `core/`, `plugins/` and `bin/`. A new variable: add one `setting(...)` line to its group.
 */

/** One environment variable: where it matters, its default (as text) and what it does. */
export interface Setting {
  name: string;
  group: SettingGroup;
  default: string;
  meaning: string;
}

/** The groups of `docs/configuration.md`, in order, with their headings. */
export const SETTING_GROUPS = {
  project: "The project's `.env` (spec 2.1)",
  cli: "Command line",
  server: "Agent server (`dev`, `serve`)",
  storage: "Storage, queue and replicas",
  limits: "Limits of the Agent API",
  webhooks: "Webhooks",
  tracing: "Tracing",
  sandbox: "Sandboxes",
  platform: "Control plane (`platform serve`)",
  internal: "Set by agentcli for its own processes (not to be set by hand)",
} as const;

/** A group key of `SETTING_GROUPS`. */
export type SettingGroup = keyof typeof SETTING_GROUPS;

const setting = (group: SettingGroup, name: string, dflt: string, meaning: string): Setting => ({
  name,
  group,
  default: dflt,
  meaning,
});

/** The catalogue, grouped as `docs/configuration.md` shows it. */
export const SETTINGS: readonly Setting[] = [
  setting(
    "project",
    "<PROVIDER>_API_KEY",
    "unset",
    "For each model provider used (main agent and subagents), e.g. `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GOOGLE_API_KEY`, `NVIDIA_API_KEY`.",
  ),
  setting(
    "project",
    "PLATFORM_API_KEY",
    "unset",
    "For `deploy`, for the `platform` sandbox, and for callers of a deployment without `[auth]` (`x-api-key`).",
  ),
  setting("project", "SANDBOX_A_API_KEY", "unset", 'For `[sandbox] provider = "sandbox_a"`.'),
  setting(
    "project",
    "SANDBOX_B_TOKEN_ID",
    "unset",
    'With `SANDBOX_B_TOKEN_SECRET`, for `[sandbox] provider = "sandbox_b"`.',
  ),
  setting(
    "project",
    "SANDBOX_B_TOKEN_SECRET",
    "unset",
    'With `SANDBOX_B_TOKEN_ID`, for `[sandbox] provider = "sandbox_b"`.',
  ),
  setting("project", "SANDBOX_C_API_KEY", "unset", 'For `[sandbox] provider = "sandbox_c"`.'),
  setting(
    "project",
    "IDENTITY_A_URL",
    "unset",
    'With `IDENTITY_A_PUBLISHABLE_DEFAULT_KEY`, for `[auth] provider = "identity_a"`.',
  ),
  setting(
    "project",
    "IDENTITY_A_PUBLISHABLE_DEFAULT_KEY",
    "unset",
    'With `IDENTITY_A_URL`, for `[auth] provider = "identity_a"`.',
  ),
  setting("project", "IDENTITY_B_SECRET_KEY", "unset", 'For `[auth] provider = "identity_b"`.'),
  setting(
    "project",
    "IDENTITY_B_PUBLISHABLE_KEY",
    "unset",
    "For `identity_b` with `[frontend].enabled = true` (browser-facing, distinct from the secret key).",
  ),
  setting(
    "project",
    "IDENTITY_B_JWKS_URL",
    "`{IDENTITY_B_API_URL}/v1/jwks`",
    "Where `identity_b` tokens' signing keys are fetched.",
  ),
  setting(
    "project",
    "IDENTITY_B_AUTHORIZED_PARTIES",
    "unset",
    "Comma-separated origins; when set, an `identity_b` token's `azp` must be one of them.",
  ),
  setting(
    "storage",
    "DATABASE_URL",
    "unset (embedded PGlite)",
    "A PostgreSQL for `serve`/`dev` (threads, runs, store, checkpoints); replicas sharing it form one server.",
  ),
  setting(
    "storage",
    "REDIS_URL",
    "unset",
    "Redis for run-queue wake-ups, cross-replica streaming and cancellation (optional beside PostgreSQL).",
  ),
  setting(
    "cli",
    "AGENTCLI_PLUGINS",
    "unset",
    "`:`-separated paths of third-party plugin files to load, as `--plugin` does.",
  ),
  setting(
    "cli",
    "AGENTCLI_STOP_GRACE_SECONDS",
    "30",
    "After SIGTERM/SIGINT, seconds a command may still run before the process ends (143, or 130 for SIGINT).",
  ),
  setting(
    "cli",
    "AGENTCLI_PLATFORM_URL",
    "`http://127.0.0.1:8100`",
    "The control plane `deploy --target platform` and the `platform` sandbox talk to (`--platform-url` overrides).",
  ),
  setting(
    "cli",
    "AGENTCLI_EXECUTABLE",
    "the running executable",
    "The Linux x64 single executable `deploy --target docker` puts in the image, when running from sources.",
  ),
  setting(
    "cli",
    "AGENTCLI_TEMPLATE_CACHE",
    "1",
    "`0` turns off the cache of embedded-database templates in `~/.cache/agentcli/` (or `$XDG_CACHE_HOME/agentcli/`).",
  ),
  setting(
    "cli",
    "AGENTCLI_DEBUG_CODE_CACHE",
    "unset",
    "`1`: the single executable prints `app.cjs code cache used` when its V8 code cache is accepted.",
  ),
  setting(
    "server",
    "AGENTCLI_ROLE",
    "all",
    "`all` serves the API and runs the queue, `api` only serves, `worker` only runs the queue (`--role`).",
  ),
  setting("server", "AGENTCLI_WORKERS", "4 per CPU (4 to 64)", "Runs a replica executes at once (`--workers`)."),
  setting("server", "AGENTCLI_EXIT_WITH_PARENT", "unset", "`1`: `serve` shuts down when its standard input closes."),
  setting("server", "AGENTCLI_MAX_CONNECTIONS", "1000", "Connections served at once."),
  setting(
    "server",
    "AGENTCLI_MAX_CONNECTIONS_PER_CLIENT",
    "128",
    "Connections one client address may hold at once (IPv6 per /64); over it a 503 with `Retry-After`. `0`: no limit (behind a load balancer all clients share its addresses).",
  ),
  setting(
    "server",
    "AGENTCLI_ALLOWED_HOSTS",
    "localhost names and IP addresses (any name for `serve` on a non-loopback bind)",
    "Comma-separated `Host` names served besides those: `name`, `.domain` for it and its subdomains, `*` for any. Other names get a 403 (DNS rebinding).",
  ),
  setting(
    "server",
    "AGENTCLI_SHUTDOWN_SECONDS",
    "10",
    "On SIGTERM, seconds a replica gives its runs to finish before handing the rest back.",
  ),
  setting(
    "server",
    "AGENTCLI_MEMORY_TUNING",
    "1",
    "`0` turns off the memory settings `dev` and `serve` start with (malloc arenas, V8 semi-space, WASM tiering, idle GC).",
  ),
  setting(
    "server",
    "AGENTCLI_DEV_AUTH_BYPASS",
    "1",
    "`0` makes `dev` enforce real auth for requests without credentials (no `dev-user`).",
  ),
  setting("server", "AGENTCLI_MEMORY", "memory-store", "The plugin whose `memory:backend` hook stores `/memories/`."),
  setting(
    "server",
    "AGENTCLI_STREAM_HEARTBEAT_SECONDS",
    "15",
    "An SSE stream sends a `: heartbeat` comment this often so proxies keep idle streams open (0: none).",
  ),
  setting("server", "AGENTCLI_RUN_TIMEOUT_SECONDS", "3600", "A run executing longer is stopped (0: no limit)."),
  setting(
    "server",
    "AGENTCLI_THREAD_TTL_MINUTES",
    "unset (threads are kept)",
    "Minutes after its last update a thread without `ttl` is deleted.",
  ),
  setting(
    "server",
    "AGENTCLI_STORE_TTL_MINUTES",
    "unset (items are kept)",
    "Minutes after its last write a store item without `ttl` is deleted.",
  ),
  setting(
    "server",
    "AGENTCLI_STORE_TTL_REFRESH_ON_READ",
    "true",
    "Whether API reads refresh an item's TTL when they do not say `refresh_ttl`.",
  ),
  setting("server", "AGENTCLI_TTL_SWEEP_SECONDS", "60", "Seconds between sweeps of expired threads and store items."),
  setting(
    "server",
    "AGENTCLI_STORE_EMBEDDINGS",
    "unset (no semantic search)",
    "An embedding model `provider:model` (e.g. `openai:text-embedding-3-small`) for semantic store search.",
  ),
  setting(
    "server",
    "AGENTCLI_STORE_INDEX_FIELDS",
    "`$` (the whole value)",
    "Comma-separated fields embedded when a store put names none.",
  ),
  setting(
    "storage",
    "AGENTCLI_CONNECT_TIMEOUT_SECONDS",
    "30",
    "At start, how long an unreachable PostgreSQL or Redis is retried before the server exits 1.",
  ),
  setting(
    "storage",
    "AGENTCLI_DB_RETRY_SECONDS",
    "60",
    "Once running, how long background work retries a statement while PostgreSQL is unreachable.",
  ),
  setting(
    "storage",
    "AGENTCLI_PG_PREPARED_STATEMENTS",
    "1",
    "`0` stops preparing statements by name (for PgBouncer before 1.21 in transaction mode).",
  ),
  setting(
    "storage",
    "AGENTCLI_RUN_LEASE_SECONDS",
    "10",
    "A worker's lease on a run it executes (renewed every third); a dead replica's runs are taken over after it.",
  ),
  setting(
    "storage",
    "AGENTCLI_QUEUE_AFFINITY_SECONDS",
    "0.3",
    "How long a run queued on a busy replica is kept for that replica's workers (0: none).",
  ),
  setting("limits", "AGENTCLI_MAX_BODY_MB", "25", "A request body (413 past it)."),
  setting(
    "limits",
    "AGENTCLI_MAX_MESSAGE_KB",
    "1024",
    "One message of a run's input, `command.update` or a state update (JSON size).",
  ),
  setting("limits", "AGENTCLI_MAX_MESSAGES", "1000", "Messages in one input or state update."),
  setting(
    "limits",
    "AGENTCLI_MAX_HISTORY_MB",
    "64",
    "A `/threads/{id}/history` answer: past it fewer states come back, with `X-Pagination-Next`.",
  ),
  setting("limits", "AGENTCLI_MAX_QUEUED_RUNS_PER_USER", "100", "Runs one user may have waiting (more: 429)."),
  setting(
    "limits",
    "AGENTCLI_MAX_RUNNING_RUNS_PER_USER",
    "0 (no limit but the workers)",
    "Runs of one user executing at once (more wait in the queue).",
  ),
  setting(
    "limits",
    "AGENTCLI_BUNDLE_MAX_MB",
    "100",
    "The project's files packed into a bundle, in MiB; the file that crosses it is named.",
  ),
  setting(
    "webhooks",
    "AGENTCLI_WEBHOOK_SECRET",
    "unset",
    "When set, webhooks carry `X-Agentcli-Signature: sha256=<hex>` (HMAC of the body).",
  ),
  setting(
    "webhooks",
    "AGENTCLI_WEBHOOK_ALLOW_PRIVATE",
    "false under `serve` (`dev`: always allowed)",
    "`true` lets webhooks reach private and loopback addresses.",
  ),
  setting("webhooks", "AGENTCLI_WEBHOOK_TIMEOUT_SECONDS", "10", "One attempt's limit (1 to 600)."),
  setting("webhooks", "AGENTCLI_WEBHOOK_MAX_ATTEMPTS", "5", "Attempts in all (1 to 20)."),
  setting(
    "tracing",
    "AGENTCLI_TRACING_PROJECT",
    "`LANGSMITH_PROJECT`, else the agent's name",
    "The tracing project spans are tagged with (the control plane sets the deployment's name).",
  ),
  setting(
    "tracing",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "unset (no OpenTelemetry tracing)",
    "The collector's base URL (`/v1/traces` is appended); turns tracing on.",
  ),
  setting(
    "tracing",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "unset",
    "The collector's full traces URL; turns tracing on.",
  ),
  setting(
    "tracing",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "unset",
    "`key=value,...` headers sent to the collector (also `OTEL_EXPORTER_OTLP_TRACES_HEADERS`).",
  ),
  setting("tracing", "OTEL_SERVICE_NAME", "the agent's name", "The service name of the spans."),
  setting(
    "tracing",
    "OTEL_SDK_DISABLED",
    "unset",
    "`true` turns OpenTelemetry tracing off (as does `OTEL_TRACES_EXPORTER=none`).",
  ),
  setting(
    "tracing",
    "LANGSMITH_TRACING",
    "unset",
    "`true` with `LANGSMITH_API_KEY` (or `LANGCHAIN_TRACING_V2`, `LANGCHAIN_API_KEY`) also traces runs to LangSmith, inputs and outputs included.",
  ),
  setting("tracing", "LANGSMITH_ENDPOINT", "LangSmith's", "Where LangSmith traces go (or `LANGCHAIN_ENDPOINT`)."),
  setting("tracing", "LANGSMITH_PROJECT", "the tracing project", "The LangSmith project of the traces."),
  setting(
    "project",
    "<PROVIDER>_BASE_URL",
    "the provider's",
    "Another address for an OpenAI-wire or Anthropic provider, e.g. `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `OLLAMA_BASE_URL` (see docs/project.md, Models).",
  ),
  setting("project", "IDENTITY_B_API_URL", "the provider's", "`identity_b`'s API, for its JWKS."),
  setting(
    "project",
    "IDENTITY_B_JS_URL",
    "from the publishable key",
    "Where the chat UI loads `identity_b`'s sign-in widget script.",
  ),
  setting("sandbox", "AGENTCLI_SANDBOX_DIR", "`<data-dir>-sandboxes/`", "Where `--sandbox local` keeps its sandboxes."),
  setting("sandbox", "AGENTCLI_SANDBOX_IDLE_SECONDS", "1800", "A sandbox unused this long is stopped (0: never)."),
  setting(
    "sandbox",
    "AGENTCLI_SANDBOX_ALLOW_NETWORK",
    "unset",
    "`1`: local sandbox commands share the host's network; otherwise they have none (loopback only).",
  ),
  setting(
    "sandbox",
    "AGENTCLI_SANDBOX_MEMORY_MB",
    "2048",
    "Memory of a local sandbox's processes together (its cgroup); per process (`RLIMIT_AS`) without a cgroup. See docs/security.md, Sandbox limits.",
  ),
  setting(
    "sandbox",
    "AGENTCLI_SANDBOX_MAX_PROCESSES",
    "256",
    "Processes and threads of a local sandbox together (its cgroup); `RLIMIT_NPROC` without a cgroup.",
  ),
  setting(
    "sandbox",
    "AGENTCLI_SANDBOX_CPUS",
    "1",
    "CPUs a local sandbox may use together (its cgroup; fractions allowed); not bounded without a cgroup.",
  ),
  setting(
    "sandbox",
    "AGENTCLI_SANDBOX_TMP_MB",
    "256",
    "Size of a local sandbox's `/tmp` and of its `/dev/shm` (tmpfs each).",
  ),
  setting(
    "sandbox",
    "AGENTCLI_SANDBOX_WORKSPACE_MB",
    "2048",
    "Disk quota of a local sandbox's `/workspace`, and its largest file.",
  ),
  setting(
    "sandbox",
    "AGENTCLI_SANDBOX_CGROUP",
    "unset",
    "A delegated cgroup v2 group under which local sandboxes get their cgroups (default: the server's own group).",
  ),
  setting(
    "sandbox",
    "AGENTCLI_SANDBOX_OUTPUT_KB",
    "100",
    "Output returned per sandbox command; the rest is cut and marked.",
  ),
  setting(
    "platform",
    "AGENTCLI_PLATFORM_SECRETS_KEY",
    "generated into `<data-dir>/secrets.key`",
    "The key (16, 24 or 32 bytes) deployment and revision secrets are encrypted with; replicas share it.",
  ),
  setting(
    "platform",
    "AGENTCLI_PLATFORM_SECRETS_PREVIOUS_KEYS",
    "unset",
    "Comma-separated former keys, still read while rotating.",
  ),
  setting("platform", "AGENTCLI_PLATFORM_MAX_BODY_MB", "1", "A JSON request body to the control plane (413 past it)."),
  setting("platform", "AGENTCLI_PLATFORM_MAX_UPLOAD_MB", "256", "An uploaded archive, compressed."),
  setting(
    "platform",
    "AGENTCLI_PLATFORM_MAX_UNPACKED_MB",
    "512",
    "An uploaded archive, unpacked (counted while streaming).",
  ),
  setting("platform", "AGENTCLI_PLATFORM_MAX_ARCHIVE_ENTRIES", "10000", "Entries of an uploaded archive."),
  setting(
    "internal",
    "AGENTCLI_PLATFORM_SANDBOX_KEY",
    "set per revision",
    "The key a deployment's `platform` sandboxes are created with (deleted with it).",
  ),
  setting(
    "internal",
    "AGENTCLI_DEPLOYMENT_ID",
    "`local`",
    "The deployment a revision belongs to; sandboxes are labelled `agentcli.deployment` with it.",
  ),
  setting("internal", "AGENTCLI_REVISION_ID", "set per revision", "The revision a Kubernetes pod runs."),
  setting(
    "internal",
    "AGENTCLI_BUNDLE_URL",
    "set per revision",
    "Where a Kubernetes pod's init container downloads its bundle.",
  ),
  setting("internal", "AGENTCLI_BUNDLE_PATH", "set per revision", "Where that bundle is written in the pod."),
  setting(
    "internal",
    "AGENTCLI_BUNDLE_TOKEN",
    "set per revision",
    "The bearer token of that download (from a Kubernetes Secret).",
  ),
  setting(
    "internal",
    "AGENTCLI_COMMAND_ID",
    "set per command",
    "Marks a Kubernetes sandbox command's processes so a timeout can kill them all.",
  ),
  setting(
    "internal",
    "AGENTCLI_MEMORY_TUNED",
    "set on restart",
    "The variables `bin/agentcli.js` set when it restarted `dev`/`serve` in place with memory settings.",
  ),
  setting(
    "internal",
    "AGENTCLI_MEMORY_TUNED_EXE",
    "set on restart",
    "The same for the single executable's restart in place.",
  ),
  setting(
    "internal",
    "AGENTCLI_CONFORMANCE_CANARY",
    "set by the sandbox conformance suite",
    "A value a sandbox provider must not leak into commands' environment.",
  ),
];
