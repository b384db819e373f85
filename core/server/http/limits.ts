/**
 * The agent server's input bounds, each with the environment variable that raises it: the
 * request body, one message, the messages of one request, a history answer, and the runs one
 * user may have queued or executing. Everything is checked before work is done; a refusal is a
 * 413 (429 for the run quota) naming the limit and the variable.
 *
 * @example
 * const limits = limitsFromEnv(process.env); // throws a user error naming a malformed variable
 * const server = await createAgentServer({ graphs, limits });
 */
import { AgentcliError, agentcliError, EnvInvalid, userError } from "../../kernel/index.ts";
import { checkMessageShape } from "./message-shape.ts";

export interface ServerLimits {
  /** Largest request body, bytes (`AGENTCLI_MAX_BODY_MB`). */
  maxBodyBytes: number;
  /** Largest single message of a run's input or a state update, bytes of JSON (`AGENTCLI_MAX_MESSAGE_KB`). */
  maxMessageBytes: number;
  /** Most messages in one run's input or state update (`AGENTCLI_MAX_MESSAGES`). */
  maxMessages: number;
  /** Largest `/threads/{id}/history` answer, bytes: fewer states are returned past it (`AGENTCLI_MAX_HISTORY_MB`). */
  maxHistoryBytes: number;
  /** Most runs one user may have pending (`AGENTCLI_MAX_QUEUED_RUNS_PER_USER`); more is a 429. */
  maxQueuedPerOwner: number;
  /** Most runs of one user executing at once (`AGENTCLI_MAX_RUNNING_RUNS_PER_USER`, 0: only the workers bound it). */
  maxRunningPerOwner: number;
}

interface Setting {
  key: keyof ServerLimits;
  env: string;
  unit: number;
  unitName: string;
  default: number;
  zeroMeansNone?: boolean;
}

/** Every bound: its variable, the unit the variable is in, and the default (in that unit). */
export const LIMIT_SETTINGS: readonly Setting[] = [
  { key: "maxBodyBytes", env: "AGENTCLI_MAX_BODY_MB", unit: 1024 * 1024, unitName: "MiB", default: 25 },
  { key: "maxMessageBytes", env: "AGENTCLI_MAX_MESSAGE_KB", unit: 1024, unitName: "KiB", default: 1024 },
  { key: "maxMessages", env: "AGENTCLI_MAX_MESSAGES", unit: 1, unitName: "messages", default: 1000 },
  { key: "maxHistoryBytes", env: "AGENTCLI_MAX_HISTORY_MB", unit: 1024 * 1024, unitName: "MiB", default: 64 },
  { key: "maxQueuedPerOwner", env: "AGENTCLI_MAX_QUEUED_RUNS_PER_USER", unit: 1, unitName: "runs", default: 100 },
  {
    key: "maxRunningPerOwner",
    env: "AGENTCLI_MAX_RUNNING_RUNS_PER_USER",
    unit: 1,
    unitName: "runs",
    default: 0,
    zeroMeansNone: true,
  },
];

/** The defaults of every bound. */
export const DEFAULT_LIMITS: ServerLimits = Object.fromEntries(
  LIMIT_SETTINGS.map((s) => [s.key, s.default * s.unit]),
) as unknown as ServerLimits;

function setting(key: keyof ServerLimits): Setting {
  return LIMIT_SETTINGS.find((s) => s.key === key)!;
}

/** The bounds set in the environment (absent ones are left out); a malformed value is a user error naming it. */
export function limitsFromEnv(env: Record<string, string | undefined>): Partial<ServerLimits> {
  const out: Partial<ServerLimits> = {};
  for (const s of LIMIT_SETTINGS) {
    const raw = env[s.env]?.trim();
    if (!raw) continue;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0 || (n === 0 && !s.zeroMeansNone)) {
      throw agentcliError(EnvInvalid, {
        action: "start the server",
        name: s.env,
        value: raw,
        problem: `is not a ${s.zeroMeansNone ? "" : "positive "}number of ${s.unitName}`,
        fix: `Set it to a number of ${s.unitName} (default ${s.default}${s.zeroMeansNone ? "; 0 for no limit" : ""}).`,
      });
    }
    out[s.key] = Math.floor(n * s.unit);
  }
  return out;
}

/** "1024 KiB" for a bound in bytes (or its count), in the unit of its variable. */
export function describeLimit(key: keyof ServerLimits, value: number): string {
  const s = setting(key);
  const n = value / s.unit;
  return `${Number.isInteger(n) ? n : n.toFixed(1)} ${s.unitName}`;
}

/** A 413 naming what is too large, the bound and the variable that raises it. */
export function overLimit(key: keyof ServerLimits, limits: ServerLimits, what: string): AgentcliError {
  const s = setting(key);
  return userError("UNPROCESSABLE", {
    message: `Request too large: ${what}; the limit is ${describeLimit(key, limits[key])}`,
    hint: `Send less, or raise ${s.env} on the server.`,
    status: 413,
  });
}

/**
 * Checks the `messages` of a run's input or state update (an object whose `messages` is an
 * array, or an array of such updates): their number, each one's JSON size, and, unless `chat`
 * is false (a graph that keeps something else under `messages`, see
 * GraphRegistry.readsChatMessages), that LangChain can read each one as a chat message
 * (./message-shape.ts; a 422 naming it otherwise).
 */
export function checkMessages(
  value: unknown,
  field: string,
  limits: ServerLimits,
  opts: { chat?: boolean } = {},
): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => checkMessages(v, `${field}[${i}]`, limits, opts));
    return;
  }
  if (!value || typeof value !== "object") return;
  const messages = (value as { messages?: unknown }).messages;
  if (messages === undefined) return;
  const list = Array.isArray(messages) ? messages : [messages];
  if (list.length > limits.maxMessages) {
    throw overLimit("maxMessages", limits, `${field}.messages has ${list.length} messages`);
  }
  list.forEach((m, i) => {
    const size = jsonBytes(m);
    if (size > limits.maxMessageBytes) {
      throw overLimit(
        "maxMessageBytes",
        limits,
        `${field}.messages[${i}] is ${describeLimit("maxMessageBytes", size)}`,
      );
    }
    if (opts.chat !== false) {
      checkMessageShape(m, Array.isArray(messages) ? `${field}.messages[${i}]` : `${field}.messages`);
    }
  });
}

/** The UTF-8 size of a value's JSON (strings by their length: no copy is made of large text). */
function jsonBytes(v: unknown): number {
  if (typeof v === "string") return v.length;
  return new TextEncoder().encode(JSON.stringify(v) ?? "").length;
}

/** A 429 for a user over the run quota, with the seconds to wait before retrying. */
export function tooManyRuns(limits: ServerLimits, queued: number): AgentcliError {
  const s = setting("maxQueuedPerOwner");
  return userError("UNPROCESSABLE", {
    message: `Cannot create the run: you have ${queued} runs waiting, the limit is ${limits.maxQueuedPerOwner}`,
    hint: `Wait for some to finish (or cancel them), then retry; the operator can raise ${s.env}.`,
    status: 429,
  });
}
