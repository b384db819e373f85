/**
 * The agent server's schema, as versioned migrations applied on start (scope "server").
 * Tables: assistants (+ versions), threads, runs (the durable queue), run_event_batches and
 * run_events (the resumable stream log, ./run-events.ts), checkpoints, checkpoint_blobs and
 * checkpoint_writes (LangGraph checkpointer), store_items (LangGraph store); usage_calls and
 * usage_counters (./usage.ts); sandboxes (scope key -> the provider's sandbox id,
 * ../harness/sandbox/manager.ts); run_traces (a run's trace kept locally, ./run-spans.ts; run_spans before);
 * revision_workers (the live workers of each revision, ./runs/revisions.ts).
 */
import type { Migration } from "./sql.ts";
import type { TemplateSpec } from "./template.ts";

export const SERVER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "agent server core",
    up: `
CREATE TABLE IF NOT EXISTS assistants (
  assistant_id text PRIMARY KEY,
  graph_id text NOT NULL,
  config jsonb NOT NULL DEFAULT '{}',
  context jsonb,
  metadata jsonb NOT NULL DEFAULT '{}',
  name text NOT NULL,
  description text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS assistant_versions (
  assistant_id text NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
  version integer NOT NULL,
  graph_id text NOT NULL,
  config jsonb NOT NULL DEFAULT '{}',
  context jsonb,
  metadata jsonb NOT NULL DEFAULT '{}',
  name text NOT NULL,
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (assistant_id, version)
);
CREATE TABLE IF NOT EXISTS threads (
  thread_id text PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  state_updated_at timestamptz NOT NULL DEFAULT now(),
  metadata jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'idle',
  state_values jsonb,
  interrupts jsonb NOT NULL DEFAULT '{}',
  config jsonb NOT NULL DEFAULT '{}',
  error jsonb
);
CREATE TABLE IF NOT EXISTS runs (
  run_id text PRIMARY KEY,
  thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  assistant_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  status text NOT NULL DEFAULT 'pending',
  metadata jsonb NOT NULL DEFAULT '{}',
  kwargs jsonb NOT NULL DEFAULT '{}',
  multitask_strategy text,
  cancel_reason text,
  attempt integer NOT NULL DEFAULT 0,
  lease_until timestamptz,
  not_before timestamptz,
  seq bigserial
);
CREATE UNIQUE INDEX IF NOT EXISTS runs_one_running_per_thread ON runs (thread_id) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS runs_pending ON runs (seq) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id, seq);
CREATE TABLE IF NOT EXISTS run_events (
  run_id text NOT NULL,
  seq integer NOT NULL,
  event text NOT NULL,
  data text NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS checkpoints (
  thread_id text NOT NULL,
  checkpoint_ns text NOT NULL DEFAULT '',
  checkpoint_id text NOT NULL,
  parent_checkpoint_id text,
  type text NOT NULL,
  checkpoint bytea NOT NULL,
  metadata bytea NOT NULL,
  metadata_json jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS checkpoint_writes (
  thread_id text NOT NULL,
  checkpoint_ns text NOT NULL DEFAULT '',
  checkpoint_id text NOT NULL,
  task_id text NOT NULL,
  idx integer NOT NULL,
  channel text NOT NULL,
  type text NOT NULL,
  value bytea NOT NULL,
  task_path text NOT NULL DEFAULT '',
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
CREATE TABLE IF NOT EXISTS store_items (
  namespace text[] NOT NULL,
  key text NOT NULL,
  value jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, key)
)`,
  },
  {
    version: 2,
    name: "sandboxes",
    up: `
CREATE TABLE IF NOT EXISTS sandboxes (
  scope_key text NOT NULL,
  backend text NOT NULL,
  sandbox_id text,
  status text NOT NULL DEFAULT 'creating',
  thread_id text,
  claim_token text,
  claimed_until timestamptz,
  last_used_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope_key, backend)
);
CREATE INDEX IF NOT EXISTS sandboxes_by_thread ON sandboxes (thread_id) WHERE thread_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS sandboxes_idle ON sandboxes (last_used_at) WHERE status = 'ready'`,
  },
  {
    // Incremental checkpoints: a checkpoint row keeps its channel versions, and each channel's
    // value is stored once per version in checkpoint_blobs, whole or (a list that grew) as
    // the items appended to the value at version `base`. Rows written before this keep their
    // whole state in the checkpoint and have no channel_versions: they are read as is.
    version: 3,
    name: "checkpoint blobs",
    up: `
CREATE TABLE IF NOT EXISTS checkpoint_blobs (
  thread_id text NOT NULL,
  checkpoint_ns text NOT NULL DEFAULT '',
  channel text NOT NULL,
  version text NOT NULL,
  type text NOT NULL,
  blob bytea,
  base text,
  PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);
ALTER TABLE checkpoints ADD COLUMN IF NOT EXISTS channel_versions jsonb`,
  },
  {
    // Scheduled runs. `next_run_date` is claimed with the firing's run insert in one
    // transaction (../engine/crons/scheduler.ts); `auth_user` is the creator the runs act as.
    version: 4,
    name: "crons",
    up: `
CREATE TABLE IF NOT EXISTS crons (
  cron_id text PRIMARY KEY,
  assistant_id text NOT NULL,
  thread_id text REFERENCES threads (thread_id) ON DELETE CASCADE,
  user_id text,
  auth_user jsonb,
  schedule text NOT NULL,
  timezone text,
  end_time timestamptz,
  payload jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  on_run_completed text,
  enabled boolean NOT NULL DEFAULT true,
  next_run_date timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS crons_due ON crons (next_run_date) WHERE enabled;
CREATE INDEX IF NOT EXISTS crons_by_thread ON crons (thread_id) WHERE thread_id IS NOT NULL`,
  },
  {
    // Leases (./lease.ts): named ones for work one replica does at a time, and the holder of
    // each running run's lease, so a replica knows which runs it still holds and another
    // takes over (resumes) a run whose holder stopped renewing.
    version: 5,
    name: "leases",
    up: `
CREATE TABLE IF NOT EXISTS leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  until timestamptz NOT NULL
);
ALTER TABLE runs ADD COLUMN IF NOT EXISTS lease_holder text;
CREATE INDEX IF NOT EXISTS runs_leased ON runs (lease_until) WHERE status = 'running'`,
  },
  {
    // Time-to-live of threads and store items (../engine/queue/ttl-sweeper.ts): a thread expires
    // `ttl_minutes` after its last update; an item `ttl_minutes` after its last write, or at
    // `expires_at` when a read refreshed it later. NULL: the server's default; 0 (items): never.
    version: 6,
    name: "ttl",
    up: `
ALTER TABLE threads ADD COLUMN IF NOT EXISTS ttl_minutes float8;
ALTER TABLE store_items ADD COLUMN IF NOT EXISTS ttl_minutes float8;
ALTER TABLE store_items ADD COLUMN IF NOT EXISTS expires_at timestamptz;
CREATE INDEX IF NOT EXISTS threads_by_updated ON threads (updated_at);
CREATE INDEX IF NOT EXISTS store_items_by_updated ON store_items (updated_at)`,
  },
  {
    // Semantic store search (./store-index.ts): one normalized embedding per indexed field
    // value of an item, going with the item.
    version: 7,
    name: "store vectors",
    up: `
CREATE TABLE IF NOT EXISTS store_vectors (
  namespace text[] NOT NULL,
  key text NOT NULL,
  field text NOT NULL,
  embedding real[] NOT NULL,
  PRIMARY KEY (namespace, key, field),
  FOREIGN KEY (namespace, key) REFERENCES store_items (namespace, key) ON DELETE CASCADE
)`,
  },
  {
    // Run traces kept locally (./run-spans.ts): a run's model, tool and subagent calls as
    // spans, written with the run's end and going with the run; `data` holds the span's
    // input, output, error, usage and attributes as JSON (sealed with encryption at rest).
    // The TTL sweeper deletes them `AGENTCLI_TRACE_RETENTION_SECONDS` after `created_at`.
    version: 8,
    name: "run spans",
    up: `
CREATE TABLE IF NOT EXISTS run_spans (
  run_id text NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq integer NOT NULL,
  span_id text NOT NULL,
  parent_id text,
  kind text NOT NULL,
  name text NOT NULL,
  status text NOT NULL,
  started_at timestamptz NOT NULL,
  ended_at timestamptz,
  data text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS run_spans_by_created ON run_spans (created_at)`,
  },
  {
    // Usage (./usage.ts): one row per model call with its tokens and estimated cost, and the
    // counters budgets read (per key and day or minute), shared by every replica.
    version: 9,
    name: "usage",
    up: `
CREATE TABLE IF NOT EXISTS usage_calls (
  id bigserial PRIMARY KEY,
  run_id text NOT NULL,
  thread_id text,
  assistant_id text,
  user_key text NOT NULL,
  client_key text,
  provider text NOT NULL,
  model text NOT NULL,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  total_tokens bigint NOT NULL DEFAULT 0,
  cached_input_tokens bigint NOT NULL DEFAULT 0,
  reasoning_tokens bigint NOT NULL DEFAULT 0,
  cost_usd float8,
  estimated boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS usage_calls_by_run ON usage_calls (run_id);
CREATE INDEX IF NOT EXISTS usage_calls_by_thread ON usage_calls (thread_id);
CREATE INDEX IF NOT EXISTS usage_calls_by_user ON usage_calls (user_key, created_at);
CREATE INDEX IF NOT EXISTS usage_calls_by_time ON usage_calls (created_at);
CREATE TABLE IF NOT EXISTS usage_counters (
  key text NOT NULL,
  bucket timestamptz NOT NULL,
  tokens bigint NOT NULL DEFAULT 0,
  cost_usd float8 NOT NULL DEFAULT 0,
  runs integer NOT NULL DEFAULT 0,
  PRIMARY KEY (key, bucket)
)`,
  },
  {
    // The stream log in batches (./run-events.ts): one row per batch of a run's events (the id
    // of its last event, its events), not one per event. No unique key: a run's end
    // deletes its batches and writes its compacted log as one in the same statement, which may
    // end at the same id; a batch written twice (a retried write) is read once.
    version: 10,
    name: "stream log batches",
    up: `
CREATE TABLE IF NOT EXISTS run_event_batches (
  run_id text NOT NULL,
  seq integer NOT NULL,
  events text NOT NULL
);
CREATE INDEX IF NOT EXISTS run_event_batches_by_run ON run_event_batches (run_id, seq)`,
  },
  {
    // Revision affinity (./runs/queue.ts): the revision of the server that created a run (null
    // under `dev` and on servers that have none), and the workers of each revision alive now
    // (renewed by ../engine/queue/worker.ts), so a worker claims another revision's runs
    // only when that revision has no live worker left.
    version: 11,
    name: "run revisions",
    up: `
ALTER TABLE runs ADD COLUMN IF NOT EXISTS revision text;
CREATE TABLE IF NOT EXISTS revision_workers (
  revision text NOT NULL,
  holder text NOT NULL,
  until timestamptz NOT NULL,
  PRIMARY KEY (revision, holder)
)`,
  },
  {
    // A run's trace as one row (./run-spans.ts): its spans as one JSON text, written with the
    // run's end. A row per span cost the end statement three to four times as much in PGlite
    // (bench/README.md). Traces already in run_spans stay there until the retention sweeps them.
    version: 12,
    name: "run traces in one row",
    up: `
CREATE TABLE IF NOT EXISTS run_traces (
  run_id text PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  spans text NOT NULL
);
CREATE INDEX IF NOT EXISTS run_traces_by_created ON run_traces (created_at)`,
  },
  {
    // A run no budget applies to records its usage with its end as one row per model, its
    // calls of that model summed and counted in \`calls\` (./usage.ts): each row costs the end
    // statement about 0.13 ms in PGlite (five index entries), once per model call before.
    version: 13,
    name: "usage rows per run and model",
    up: `ALTER TABLE usage_calls ADD COLUMN IF NOT EXISTS calls integer NOT NULL DEFAULT 1`,
  },
];

/** New embedded server databases start from a dump of this (see ./template.ts). */
export const SERVER_TEMPLATE: TemplateSpec = { name: "server", migrations: { server: SERVER_MIGRATIONS } };
