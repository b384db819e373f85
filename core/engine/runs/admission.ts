/**
 * Run admission: the bounds a run's input is checked against before anything is stored (the
 * messages of one request, one message's size, their shape) and the runs one user may have
 * queued or executing. Each bound has the environment variable that raises it; a refusal is a
 * 413 (429 for the run quota) naming the bound and the variable. The server's HTTP bounds
 * (request body, history answers) are core/server/http/limits.ts, which reads them all from
 * the environment.
 *
 * @example
 * checkMessages(body.input, { field: "input", limits, chat: true }); // throws a 413 or 422 naming the message
 */
import { AgentcliError, agentcliError, RequestTooLarge, TooManyRuns } from "../../kernel/index.ts";
import { checkMessageShape } from "./message-shape.ts";

/** The bounds of run admission. */
export interface RunLimits {
  /** Largest single message of a run's input or a state update, bytes of JSON (`AGENTCLI_MAX_MESSAGE_KB`). */
  maxMessageBytes: number;
  /** Most messages in one run's input or state update (`AGENTCLI_MAX_MESSAGES`). */
  maxMessages: number;
  /** Most runs one user may have pending (`AGENTCLI_MAX_QUEUED_RUNS_PER_USER`); more is a 429. */
  maxQueuedPerOwner: number;
  /** Most runs of one user executing at once (`AGENTCLI_MAX_RUNNING_RUNS_PER_USER`, 0: only the workers bound it). */
  maxRunningPerOwner: number;
}

/** One bound: its variable, the unit the variable is in, and the default (in that unit). */
export interface LimitSetting<K extends string = string> {
  key: K;
  env: string;
  unit: number;
  unitName: string;
  default: number;
  zeroMeansNone?: boolean;
}

/** The bounds of run admission, each with its variable. */
export const RUN_LIMIT_SETTINGS = {
  maxMessageBytes: {
    key: "maxMessageBytes",
    env: "AGENTCLI_MAX_MESSAGE_KB",
    unit: 1024,
    unitName: "KiB",
    default: 1024,
  },
  maxMessages: { key: "maxMessages", env: "AGENTCLI_MAX_MESSAGES", unit: 1, unitName: "messages", default: 1000 },
  maxQueuedPerOwner: {
    key: "maxQueuedPerOwner",
    env: "AGENTCLI_MAX_QUEUED_RUNS_PER_USER",
    unit: 1,
    unitName: "runs",
    default: 100,
  },
  maxRunningPerOwner: {
    key: "maxRunningPerOwner",
    env: "AGENTCLI_MAX_RUNNING_RUNS_PER_USER",
    unit: 1,
    unitName: "runs",
    default: 0,
    zeroMeansNone: true,
  },
} as const satisfies { [K in keyof RunLimits]: LimitSetting<K> };

/** "1024 KiB" for a bound in bytes (or its count), in the unit of its variable. */
export function describeBound(s: LimitSetting, value: number): string {
  const n = value / s.unit;
  return `${Number.isInteger(n) ? n : n.toFixed(1)} ${s.unitName}`;
}

/** A 413 naming what is too large, the bound (`limit`, in bytes or a count) and the variable that raises it. */
export function tooLarge(s: LimitSetting, limit: number, what: string): AgentcliError {
  return agentcliError(RequestTooLarge, { what, limit: describeBound(s, limit), env: s.env }, { status: 413 });
}

/** Where a `messages` value is checked: its field's name in the request, the bounds, and whether it holds chat messages. */
export interface MessagesCheck {
  field: string;
  limits: Pick<RunLimits, "maxMessages" | "maxMessageBytes">;
  /** False for a graph that keeps something else under `messages` (see GraphRegistry.readsChatMessages). */
  chat?: boolean;
}

/**
 * Checks the `messages` of a run's input or state update (an object whose `messages` is an
 * array, or an array of such updates): their number, each one's JSON size, and, unless `chat`
 * is false, that LangChain can read each one as a chat message (./message-shape.ts; a 422
 * naming it otherwise).
 */
export function checkMessages(value: unknown, check: MessagesCheck): void {
  const { field, limits } = check;
  if (Array.isArray(value)) {
    value.forEach((v, i) => checkMessages(v, { ...check, field: `${field}[${i}]` }));
    return;
  }
  if (!value || typeof value !== "object") return;
  const messages = (value as { messages?: unknown }).messages;
  if (messages === undefined) return;
  const list = Array.isArray(messages) ? messages : [messages];
  if (list.length > limits.maxMessages) {
    throw tooLarge(RUN_LIMIT_SETTINGS.maxMessages, limits.maxMessages, `${field}.messages has ${list.length} messages`);
  }
  list.forEach((m, i) => {
    const size = jsonBytes(m);
    if (size > limits.maxMessageBytes) {
      const s = RUN_LIMIT_SETTINGS.maxMessageBytes;
      throw tooLarge(s, limits.maxMessageBytes, `${field}.messages[${i}] is ${describeBound(s, size)}`);
    }
    if (check.chat !== false) {
      checkMessageShape(m, Array.isArray(messages) ? `${field}.messages[${i}]` : `${field}.messages`);
    }
  });
}

/** The UTF-8 size of a value's JSON (strings by their length: no copy is made of large text). */
function jsonBytes(v: unknown): number {
  if (typeof v === "string") return v.length;
  return new TextEncoder().encode(JSON.stringify(v) ?? "").length;
}

/** A 429 for a user over the run quota. */
export function tooManyRuns(limits: Pick<RunLimits, "maxQueuedPerOwner">, queued: number): AgentcliError {
  return agentcliError(TooManyRuns, {
    queued,
    max: limits.maxQueuedPerOwner,
    env: RUN_LIMIT_SETTINGS.maxQueuedPerOwner.env,
  }, { status: 429 });
}
