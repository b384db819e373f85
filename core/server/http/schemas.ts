/**
 * Request bodies of the Agent API as zod schemas (LangGraph Platform dialect, as
 * `@langchain/langgraph-sdk` sends them). Unknown fields are ignored, `null` means absent.
 */
import { z } from "zod";
import { isHttpUrl, type RunCreateBody, STREAM_MODES } from "../../engine/index.ts";

const obj = z.record(z.string(), z.unknown());

/** The longest time-to-live accepted (thread and store item), in minutes: one year. */
export const MAX_TTL_MINUTES = 525_600;

/**
 * The longest delay of a run (`after_seconds`): 30 days. (A timer cannot wait longer than
 * 2^31 ms, about 24.8 days, in one go; the worker waits in steps.)
 */
export const MAX_AFTER_SECONDS = 30 * 24 * 3600;
const opt = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? undefined);
const limit = (d: number) => z.coerce.number().int().min(1).max(1000).nullish().transform((v) => v ?? d);
const offset = z.coerce.number().int().min(0).nullish().transform((v) => v ?? 0);
const sortOrder = opt(z.enum(["asc", "desc"]));
/** A field this server does not honour: refused (422 naming it) rather than silently ignored; null means absent. */
const unsupported = (why: string) =>
  z.unknown().optional().refine((v) => v === undefined || v === null, why).transform(() => undefined);

export const configSchema = z.looseObject({
  tags: opt(z.array(z.string())),
  recursion_limit: opt(z.number().int().positive()),
  run_name: opt(z.string()),
  max_concurrency: opt(z.number().int().positive()),
  configurable: opt(obj),
});

export const assistantCreate = z.object({
  graph_id: z.string().min(1),
  assistant_id: opt(z.string().min(1)),
  config: opt(configSchema),
  context: z.unknown().optional(),
  metadata: opt(obj),
  if_exists: opt(z.enum(["raise", "do_nothing"])),
  name: opt(z.string()),
  description: opt(z.string()),
});

export const assistantPatch = z.object({
  graph_id: opt(z.string().min(1)),
  config: opt(configSchema),
  context: z.unknown().optional(),
  metadata: opt(obj),
  name: opt(z.string()),
  description: opt(z.string()),
});

export const assistantSearch = z.object({
  graph_id: opt(z.string()),
  name: opt(z.string()),
  metadata: opt(obj),
  limit: limit(10),
  offset,
  sort_by: opt(z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"])),
  sort_order: sortOrder,
  select: opt(z.array(z.string())),
});

export const assistantVersions = z.object({ metadata: opt(obj), limit: limit(10), offset });
export const assistantLatest = z.object({ version: z.number().int().min(1) });

const superstep = z.object({
  updates: z.array(z.object({ values: z.unknown().optional(), command: z.unknown().optional(), as_node: z.string() })),
});

/** A time-to-live: minutes, or `{ttl: minutes, strategy: "delete"}` (the SDK's two forms). */
const threadTtl = z.union([
  z.number().positive().max(MAX_TTL_MINUTES),
  z.object({ ttl: z.number().positive().max(MAX_TTL_MINUTES), strategy: opt(z.literal("delete")) }),
]);

export const threadCreate = z.object({
  thread_id: opt(z.string().min(1)),
  metadata: opt(obj),
  if_exists: opt(z.enum(["raise", "do_nothing"])),
  supersteps: opt(z.array(superstep)),
  ttl: opt(threadTtl),
});

export const threadPatch = z.object({ metadata: opt(obj), ttl: opt(threadTtl) });

export const threadPrune = z.object({
  thread_ids: z.array(z.string().min(1)).max(1000),
  strategy: opt(z.enum(["delete", "keep_latest"])),
});

export const threadSearch = z.object({
  ids: opt(z.array(z.string())),
  metadata: opt(obj),
  values: opt(obj),
  status: opt(z.enum(["idle", "busy", "interrupted", "error"])),
  limit: limit(10),
  offset,
  sort_by: opt(z.enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"])),
  sort_order: sortOrder,
  select: opt(z.array(z.string())),
});

export const threadCount = z.object({
  metadata: opt(obj),
  values: opt(obj),
  status: opt(z.enum(["idle", "busy", "interrupted", "error"])),
});

const checkpointRef = z.looseObject({
  checkpoint_id: opt(z.string()),
  checkpoint_ns: opt(z.string()),
  thread_id: opt(z.string()),
});

export const stateUpdate = z.object({
  values: z.unknown().optional(),
  checkpoint: opt(checkpointRef),
  checkpoint_id: opt(z.string()),
  as_node: opt(z.string()),
});

export const stateAtCheckpoint = z.object({ checkpoint: checkpointRef, subgraphs: opt(z.boolean()) });

export const history = z.object({
  limit: limit(10),
  before: opt(z.union([z.string(), z.object({ configurable: opt(obj) }).loose(), checkpointRef])),
  metadata: opt(obj),
  checkpoint: opt(checkpointRef),
  select: opt(
    z.array(
      z.enum(["values", "next", "tasks", "checkpoint", "metadata", "created_at", "parent_checkpoint", "interrupts"]),
    ),
  ),
});

const streamMode = z.enum(STREAM_MODES);

/** A run's input: the graph's state update (keys of its state), or null (resume, or nothing new). */
const runInput = z.record(z.string(), z.unknown(), {
  error: `must be an object of the graph's state keys, e.g. {"messages": [{"role": "user", "content": "Hi"}]}, or null`,
}).nullish();

export const runCreate = z.object({
  assistant_id: z.string().min(1),
  input: runInput,
  command: opt(
    z.object({ resume: z.unknown().optional(), update: z.unknown().optional(), goto: z.unknown().optional() }),
  ),
  config: opt(configSchema),
  context: z.unknown().optional(),
  metadata: opt(obj),
  stream_mode: opt(z.union([streamMode, z.array(streamMode)]).transform((v) => (Array.isArray(v) ? v : [v]))),
  stream_subgraphs: opt(z.boolean()),
  stream_resumable: opt(z.boolean()),
  feedback_keys: unsupported("feedback keys need LangSmith, which this server does not use"),
  interrupt_before: opt(z.union([z.literal("*"), z.array(z.string())])),
  interrupt_after: opt(z.union([z.literal("*"), z.array(z.string())])),
  checkpoint: opt(checkpointRef),
  checkpoint_id: opt(z.string()),
  checkpoint_during: opt(z.boolean()),
  durability: opt(z.enum(["sync", "async", "exit"])),
  webhook: opt(z.string().refine(isHttpUrl, "must be an http:// or https:// URL")),
  strict_resume: opt(z.boolean()),
  multitask_strategy: opt(z.enum(["reject", "interrupt", "rollback", "enqueue"])),
  on_completion: opt(z.enum(["delete", "keep"])),
  on_disconnect: opt(z.enum(["cancel", "continue"])),
  after_seconds: opt(z.number().min(0).max(MAX_AFTER_SECONDS, `must be at most ${MAX_AFTER_SECONDS} (30 days)`)),
  if_not_exists: opt(z.enum(["create", "reject"])),
  langsmith_tracer: unsupported("LangSmith tracing is not configured on this server"),
});
/**
 * The run service's input type (core/engine/runs/input.ts): what the parser gives is one
 * (checked here: the same fields, each of a type the engine accepts).
 */
export type { RunCreateBody };
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const runCreateFields: Same<keyof z.output<typeof runCreate>, keyof RunCreateBody> = true;
const runCreateGivesTheEngines = (parsed: z.output<typeof runCreate>): RunCreateBody => parsed;
void runCreateFields, void runCreateGivesTheEngines;

export const runsCancelMany = z.object({
  thread_id: opt(z.string()),
  run_ids: opt(z.array(z.string())),
  status: opt(z.enum(["pending", "running", "all"])),
});

const namespace = z.array(z.string().min(1).refine((s) => !s.includes("."), "namespace labels cannot contain '.'"));

export const storePut = z.object({
  namespace,
  key: z.string().min(1),
  value: obj,
  index: opt(z.union([z.literal(false), z.array(z.string())], { error: "must be false or an array of field paths" })),
  // Minutes; null: never expires (the server's default TTL does not apply); absent: the default.
  ttl: z.number().positive().max(MAX_TTL_MINUTES).nullable().optional(),
});
export const storeDelete = z.object({ namespace, key: z.string().min(1) });
export const storeSearch = z.object({
  namespace_prefix: opt(namespace),
  filter: opt(obj),
  limit: limit(10),
  offset,
  query: opt(z.string()),
  refresh_ttl: opt(z.boolean()),
});
export const storeNamespaces = z.object({
  prefix: opt(namespace),
  suffix: opt(namespace),
  max_depth: opt(z.number().int().min(1)),
  limit: limit(100),
  offset,
});

/** An ISO 8601 date-time with its offset (`end_time`), or null. */
const isoDateTime = z.string().refine(
  (v) => /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/i.test(v) && !Number.isNaN(Date.parse(v)),
  {
    error: 'must be an ISO 8601 date-time with an offset, e.g. "2030-01-01T00:00:00Z"',
  },
);

/** What each firing of a cron runs: the run fields LangGraph's cron payload carries. */
const cronRun = runCreate.pick({
  input: true,
  config: true,
  context: true,
  interrupt_before: true,
  interrupt_after: true,
  webhook: true,
  multitask_strategy: true,
  checkpoint_during: true,
  durability: true,
  stream_mode: true,
  stream_subgraphs: true,
  stream_resumable: true,
});

export const cronCreate = cronRun.extend({
  assistant_id: z.string().min(1),
  schedule: z.string().min(1),
  timezone: opt(z.string().min(1)),
  end_time: opt(isoDateTime),
  metadata: opt(obj),
  enabled: opt(z.boolean()),
  on_run_completed: opt(z.enum(["delete", "keep"])),
});
export type CronCreateBody = z.output<typeof cronCreate>;

export const cronPatch = cronRun.omit({ multitask_strategy: true, checkpoint_during: true }).extend({
  schedule: opt(z.string().min(1)),
  timezone: opt(z.string().min(1)),
  // null clears the end time; absent leaves it as it is.
  end_time: isoDateTime.nullable().optional(),
  metadata: opt(obj),
  enabled: opt(z.boolean()),
  on_run_completed: opt(z.enum(["delete", "keep"])),
});
export type CronPatchBody = z.output<typeof cronPatch>;

export const cronSearch = z.object({
  assistant_id: opt(z.string()),
  thread_id: opt(z.string()),
  enabled: opt(z.boolean()),
  metadata: opt(obj),
  limit: limit(10),
  offset,
  sort_by: opt(z.enum(["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"])),
  sort_order: sortOrder,
  select: opt(
    z.array(
      z.enum([
        "cron_id",
        "assistant_id",
        "thread_id",
        "end_time",
        "schedule",
        "created_at",
        "updated_at",
        "user_id",
        "payload",
        "next_run_date",
        "metadata",
        "now",
        "timezone",
        "enabled",
        "on_run_completed",
      ]),
    ),
  ),
});

export const cronCount = z.object({ assistant_id: opt(z.string()), thread_id: opt(z.string()), metadata: opt(obj) });
