/**
 * The error catalogue: Runs and crons (UNPROCESSABLE, CONFLICT, RATE_LIMITED, BUDGET_EXCEEDED): what the run service refuses
 * (admission bounds, a busy thread, unknown interrupt nodes, webhooks), the runs routes'
 * query values and the cron schedules. Entries of one area; core/kernel/errors-data.ts lists
 * every area (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** A request over an input bound (HTTP 413 at the call site): `what` is too large, `env` raises the bound. */
export const RequestTooLarge = {
  name: "RequestTooLarge",
  code: "UNPROCESSABLE",
  title: "A request is larger than a bound of the server (body, message, number of messages); HTTP 413.",
  message: (v: { what: string; limit: string }) => `Request too large: ${v.what}; the limit is ${v.limit}`,
  hint: (v: { env: string }) => `Send less, or raise ${v.env} on the server.`,
} as const satisfies ErrorData;

/** A user with too many runs waiting (HTTP 429 at the call site). */
export const TooManyRuns = {
  name: "TooManyRuns",
  code: "RATE_LIMITED",
  title: "A user has as many runs waiting as the server allows one user; HTTP 429.",
  message: (v: { queued: number; max: number }) =>
    `Cannot create the run: you have ${v.queued} runs waiting, the limit is ${v.max}`,
  hint: (v: { env: string }) =>
    `Wait for some to finish (or cancel them), then retry; the operator can raise ${v.env}.`,
} as const satisfies ErrorData;

/** A new run over a daily usage budget (HTTP 429 at the call site, with `Retry-After`). */
export const UsageLimitReached = {
  name: "UsageLimitReached",
  code: "BUDGET_EXCEEDED",
  title: "A new run would go over a daily usage budget (tokens or cost per day); HTTP 429.",
  message: (v: { limit: string; used: string; max: string }) =>
    `Cannot create the run: ${v.limit} is used up (${v.used} of ${v.max})`,
  hint: (v: { retry: string; env: string }) => `Retry ${v.retry}; the operator can raise ${v.env} (0: no limit).`,
} as const satisfies ErrorData;

/** A new run over a runs-per-minute limit (HTTP 429 at the call site, with `Retry-After`). */
export const RunRateLimited = {
  name: "RunRateLimited",
  code: "RATE_LIMITED",
  title: "A new run would go over a runs-per-minute limit (of a user, a client address, the deployment); HTTP 429.",
  message: (v: { limit: string; used: string; max: string }) =>
    `Cannot create the run: ${v.limit} is used up (${v.used} of ${v.max})`,
  hint: (v: { retry: string; env: string }) => `Retry ${v.retry}; the operator can raise ${v.env} (0: no limit).`,
} as const satisfies ErrorData;

/** A run in flight whose model calls went over a daily budget: it ends `error` with this on its stream. */
export const UsageLimitCrossed = {
  name: "UsageLimitCrossed",
  code: "BUDGET_EXCEEDED",
  title: "A run's model calls went over a daily usage budget; the run stopped with an error event naming it.",
  message: (v: { limit: string; used: string; max: string }) =>
    `The run stopped: ${v.limit} is used up (${v.used} of ${v.max})`,
  hint: (v: { retry: string; env: string }) => `Retry ${v.retry}; the operator can raise ${v.env} (0: no limit).`,
} as const satisfies ErrorData;

/** A run on a thread whose run in progress `multitask_strategy: "reject"` (or its absence on a new run) refuses. */
export const ThreadBusy = {
  name: "ThreadBusy",
  code: "CONFLICT",
  title: "A run is started on a thread that has a run in progress, with multitask_strategy reject.",
  message: (v: { threadId: string }) => `Cannot start a run on thread "${v.threadId}": it has a run in progress`,
  hint: 'Wait for it, or choose multitask_strategy "enqueue", "interrupt" or "rollback".',
} as const satisfies ErrorData;

/** `interrupt_before`/`interrupt_after` names nodes the graph does not have. */
export const InterruptNodeUnknown = {
  name: "InterruptNodeUnknown",
  code: "UNPROCESSABLE",
  title: "interrupt_before or interrupt_after names a node the graph does not have.",
  message: (v: { field: string; unknown: string; graphId: string; nodes: string }) =>
    `Invalid request: ${v.field} names ${v.unknown}, not a node of graph "${v.graphId}" (its nodes: ${v.nodes}; or "*" for all)`,
  hint: (v: { field: string }) => `Name nodes of the graph in ${v.field}, or "*" for all.`,
} as const satisfies ErrorData;

/** A run's `webhook` that is not an http(s) URL. */
export const WebhookNotHttp = {
  name: "WebhookNotHttp",
  code: "UNPROCESSABLE",
  title: "A run's or cron's webhook is not an http:// or https:// URL.",
  message: (v: { field: string }) => `Invalid request: ${v.field} must be an http:// or https:// URL`,
  hint: "Give the full URL of the endpoint, e.g. https://example.com/hook.",
} as const satisfies ErrorData;

/** A run's `webhook` on a private, loopback or link-local address while such targets are refused. */
export const WebhookRefused = {
  name: "WebhookRefused",
  code: "UNPROCESSABLE",
  title: "A run's or cron's webhook points at a private, loopback or link-local address.",
  message: (v: { field: string; target: string; why: string }) =>
    `Invalid request: ${v.field} ${v.target} is refused: ${v.why} (allow such targets with AGENTCLI_WEBHOOK_ALLOW_PRIVATE=true)`,
  hint: "Use a public address, or set AGENTCLI_WEBHOOK_ALLOW_PRIVATE=true on the server.",
} as const satisfies ErrorData;

/** A run batch whose body is not a JSON array. */
export const RunBatchNotArray = {
  name: "RunBatchNotArray",
  code: "UNPROCESSABLE",
  title: "The body of POST /runs/batch is not an array.",
  message: "Invalid request: the batch body must be an array of runs",
  hint: 'Send a JSON array of run bodies, e.g. [{"assistant_id": "agent"}].',
} as const satisfies ErrorData;

/** A whole-number query value out of its range (`limit`, `offset` of the runs list). */
export const QueryNotInRange = {
  name: "QueryNotInRange",
  code: "UNPROCESSABLE",
  title: "A query value is not a whole number in its range.",
  message: (v: { name: string; min: number; max: number; raw: string }) =>
    `Invalid request: ${v.name} must be a whole number from ${v.min} to ${v.max} (got "${v.raw}")`,
  hint: (v: { name: string }) => `Pass ${v.name} as a whole number in range, or leave it out for the default.`,
} as const satisfies ErrorData;

/** A `/usage` query value it cannot read (`group_by`, `since`, `until`, `user`). */
export const UsageQueryInvalid = {
  name: "UsageQueryInvalid",
  code: "UNPROCESSABLE",
  title: "A query value of `GET /usage` is not one it accepts.",
  message: (v: { name: string; raw: string; problem: string }) => `Invalid request: ${v.name}="${v.raw}" ${v.problem}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** A run list filtered by a status runs do not have. */
export const RunStatusUnknown = {
  name: "RunStatusUnknown",
  code: "UNPROCESSABLE",
  title: "A run list is filtered by a status that is not a run status.",
  message: (v: { statuses: string; status: string }) =>
    `Invalid request: status must be one of ${v.statuses} (got "${v.status}")`,
  hint: "Leave status out to list runs of every status.",
} as const satisfies ErrorData;

/** Deleting a run that has not finished. */
export const RunNotFinished = {
  name: "RunNotFinished",
  code: "CONFLICT",
  title: "A run is deleted while it is pending or running.",
  message: (v: { runId: string; status: string }) => `Cannot delete run "${v.runId}": it is ${v.status}`,
  hint: "Cancel it first.",
} as const satisfies ErrorData;

/** A cron schedule without five fields. */
export const CronScheduleFields = {
  name: "CronScheduleFields",
  code: "UNPROCESSABLE",
  title: "A cron schedule does not have five fields.",
  message: (v: { schedule: string; count: number }) =>
    `Invalid cron schedule "${v.schedule}": it has ${v.count} field${
      v.count === 1 ? "" : "s"
    }; a schedule has five (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5"`,
  hint: "Write the schedule as crontab(5) does: five fields separated by spaces.",
} as const satisfies ErrorData;

/** A cron schedule that croner cannot read. */
export const CronScheduleInvalid = {
  name: "CronScheduleInvalid",
  code: "UNPROCESSABLE",
  title: "A cron schedule's fields cannot be read.",
  message: (v: { schedule: string; why: string }) => `Invalid cron schedule "${v.schedule}": ${v.why}`,
  hint: 'Check each field\'s range and syntax (e.g. "*/15 9-17 * * 1-5").',
} as const satisfies ErrorData;

/** A cron's timezone that is not an IANA name. */
export const CronTimezoneUnknown = {
  name: "CronTimezoneUnknown",
  code: "UNPROCESSABLE",
  title: "A cron's timezone is not an IANA timezone name.",
  message: (v: { timezone: string }) =>
    `Invalid timezone "${v.timezone}": not an IANA timezone name (e.g. "UTC", "Europe/Paris", "America/New_York")`,
  hint: "Leave timezone out for UTC.",
} as const satisfies ErrorData;

/** A cron whose `end_time` is already past. */
export const CronEndTimePast = {
  name: "CronEndTimePast",
  code: "UNPROCESSABLE",
  title: "A cron's end_time is in the past.",
  message: (v: { endTime: string }) =>
    `Invalid request: end_time "${v.endTime}" is in the past; the cron would never run`,
  hint: "Set end_time in the future, or leave it out.",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const RUNS_ERRORS: readonly ErrorData[] = [
  RequestTooLarge,
  TooManyRuns,
  UsageLimitReached,
  RunRateLimited,
  UsageLimitCrossed,
  ThreadBusy,
  InterruptNodeUnknown,
  WebhookNotHttp,
  WebhookRefused,
  RunBatchNotArray,
  QueryNotInRange,
  UsageQueryInvalid,
  RunStatusUnknown,
  RunNotFinished,
  CronScheduleFields,
  CronScheduleInvalid,
  CronTimezoneUnknown,
  CronEndTimePast,
];
