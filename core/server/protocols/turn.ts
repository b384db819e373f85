/**
 * One turn of an assistant for the protocol endpoints (MCP, A2A): a run created through the
 * server's own run service (`deps.runs`: owner scoping, multitask strategies, the durable
 * queue), followed through it until it ends, then read back as an outcome: the final
 * answer, pending approval requests, or the error. Runs made here show up in the Agent API.
 *
 * @example
 * const run = await startTurn(deps, user, { assistantId: "agent", threadId: null, message: "hi" });
 * const outcome = await followTurn(deps, run, { onUpdate: (u) => console.log(describeUpdate(u)) });
 */
import type { AuthUser } from "../../kernel/index.ts";
import type { RequestClient } from "../../engine/index.ts";
import type { Run, RunStatus, Thread } from "../../storage/index.ts";
import type { ServerDeps } from "../deps.ts";
import { checkJsonText } from "../http/json-guard.ts";
import type { RunCreateBody } from "../http/schemas.ts";

/** What a turn asks for: a new user message, or the answer to a pending interrupt. */
export interface TurnRequest {
  assistantId: string;
  /** The request's client (address, browser cookie): whom an anonymous caller's usage counts for. */
  client?: RequestClient;
  /** The thread to continue (it must exist and be the caller's); null starts a new one (owned by the caller). */
  threadId: string | null;
  /**
   * When `threadId` names no thread, create it for the caller instead of failing with a 404
   * (A2A: a client-chosen new `contextId`). Another user's thread stays a 404 either way.
   */
  createMissingThread?: boolean;
  message?: string;
  resume?: unknown;
  metadata?: Record<string, unknown>;
  multitaskStrategy?: RunCreateBody["multitask_strategy"];
  /** How the caller's protocol names the message (or resume answer) and the thread, in errors (default "message", "thread_id"). */
  names?: { message?: string; thread?: string };
}

/** How a turn ended. */
export interface TurnOutcome {
  run: Run;
  status: RunStatus;
  /** The last AI message's text ("" when there is none). */
  answer: string;
  /** Interrupt values waiting for an answer (approval requests), empty when none. */
  interrupts: unknown[];
  /** The failure message of an `error` run. */
  error: string | null;
  thread: Thread | null;
}

/**
 * Creates the run of a turn: on a new thread when `threadId` is null; on `threadId` when it is
 * the caller's (a 404 AgentcliError naming it otherwise, unless `createMissingThread`). Text
 * that cannot be stored (U+0000, an unpaired surrogate) is a 422 AgentcliError naming it.
 */
export async function startTurn(deps: ServerDeps, user: AuthUser | null, t: TurnRequest): Promise<Run> {
  // Text PostgreSQL cannot store (NUL, unpaired surrogates) or too deep a value is the
  // caller's mistake: a 422 naming where it is, before anything is written.
  if (t.threadId !== null) checkJsonText(t.threadId, t.names?.thread ?? "thread_id");
  checkJsonText(t.resume !== undefined ? t.resume : t.message, t.names?.message ?? "message");
  checkJsonText(t.metadata, "metadata");
  const threadId = t.threadId ?? crypto.randomUUID();
  const create = t.threadId === null || t.createMissingThread === true;
  const body: RunCreateBody = {
    assistant_id: t.assistantId,
    ...(t.resume !== undefined
      ? { command: { resume: t.resume } }
      : { input: { messages: [{ role: "user", content: t.message ?? "" }] } }),
    stream_mode: ["updates"],
    metadata: t.metadata,
    multitask_strategy: t.multitaskStrategy,
    if_not_exists: create ? "create" : "reject",
  } as RunCreateBody;
  return deps.runs.create({ user, body, threadId, client: t.client });
}

/** A graph step as the run streamed it: `{ <node>: <update> }`. */
export type TurnUpdate = Record<string, unknown>;

/**
 * Follows a run from its first event to its end. `onUpdate` sees each `updates` event; an
 * abort of `signal` cancels the run (the caller went away) and still waits for its end.
 */
export async function followTurn(
  deps: ServerDeps,
  run: Run,
  opts: { signal?: AbortSignal; onUpdate?: (u: TurnUpdate) => void | Promise<void>; afterId?: number } = {},
): Promise<TurnOutcome> {
  const onAbort = () => void deps.runs.cancelLatest(run.run_id);
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const it = deps.runs.follow(run, { afterId: opts.afterId ?? 0 });
    while (true) {
      const n = await it.next();
      if (n.done) break;
      if (n.value.event === "updates" && opts.onUpdate) {
        try {
          await opts.onUpdate(JSON.parse(n.value.data) as TurnUpdate);
        } catch { /* a progress listener never stops the turn */ }
      }
    }
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
  return await outcomeOf(deps, run.run_id, run);
}

/** Reads the outcome of a run from storage (final or not). */
export async function outcomeOf(deps: ServerDeps, runId: string, fallback: Run): Promise<TurnOutcome> {
  const run = (await deps.storage.runs.get(runId)) ?? fallback;
  const thread = await deps.storage.threads.get(run.thread_id);
  const latest = thread ? (await deps.storage.runs.list(run.thread_id, { limit: 1, offset: 0 }))[0] : undefined;
  // A thread's pending interrupts belong to its latest run only.
  const interrupts = thread && latest?.run_id === run.run_id && run.status === "success"
    ? Object.values(thread.interrupts ?? {}).flat().map((i) => (i as { value?: unknown })?.value ?? i)
    : [];
  const err = thread?.error as { message?: unknown } | null | undefined;
  return {
    run,
    status: run.status,
    answer: answerOf(thread?.values),
    interrupts,
    error: run.status === "error" ? String(err?.message ?? "The run failed") : null,
    thread,
  };
}

/** The text of the last AI message in thread values (`{ messages: [...] }` in wire form). */
export function answerOf(values: unknown): string {
  const messages = (values as { messages?: unknown[] } | null)?.messages;
  if (!Array.isArray(messages)) return "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { type?: string; content?: unknown };
    if (m?.type === "ai") return contentText(m.content);
    if (m?.type === "human") return "";
  }
  return "";
}

/** The text of a message content (a string, or content blocks). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((
    b,
  ) => (typeof b === "string"
    ? b
    : (b as { type?: string; text?: unknown })?.type === "text"
    ? String((b as { text: unknown }).text)
    : "")
  ).join("");
}

/** A short human line for a graph step: tool calls, tool results, or the node name. */
export function describeUpdate(update: TurnUpdate): string {
  const parts: string[] = [];
  for (const [node, value] of Object.entries(update)) {
    if (node === "__interrupt__") {
      parts.push("waiting for approval");
      continue;
    }
    // Middleware steps that change nothing are not worth a line.
    if (!value || typeof value !== "object" || Object.keys(value).length === 0) continue;
    const messages = (value as { messages?: unknown[] } | null)?.messages;
    const list = Array.isArray(messages)
      ? messages as Array<{ type?: string; name?: string; tool_calls?: Array<{ name?: string }> }>
      : [];
    const calls = list.flatMap((m) => (m.type === "ai" ? (m.tool_calls ?? []).map((c) => c.name ?? "?") : []));
    const results = list.filter((m) => m.type === "tool").map((m) => m.name ?? "tool");
    if (calls.length) parts.push(`calling ${calls.join(", ")}`);
    else if (results.length) parts.push(`${results.join(", ")} finished`);
    else if (list.some((m) => m.type === "ai")) parts.push("answering");
    else parts.push(`step ${node}`);
  }
  return parts.join("; ");
}

/** An approval request (the harness's interrupt shape) in one readable paragraph. */
export function describeInterrupts(interrupts: unknown[]): string {
  const lines: string[] = [];
  for (const value of interrupts) {
    const actions = (value as { action_requests?: Array<{ name?: string; args?: unknown }> } | null)?.action_requests;
    if (Array.isArray(actions)) {
      for (const a of actions) lines.push(`- ${a.name ?? "?"} ${JSON.stringify(a.args ?? {})}`);
    } else {
      lines.push(`- ${typeof value === "string" ? value : JSON.stringify(value)}`);
    }
  }
  return `Approval required before continuing:\n${lines.join("\n")}`;
}
