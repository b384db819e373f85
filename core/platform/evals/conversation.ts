/**
 * Plays one eval case's conversation through the Agent API (spec 4.1): a thread, then one run
 * per turn (a user message, or the decisions resuming an interrupted run), waiting for each;
 * then reads the thread's state. `fetch` is the Agent API: in process for `agentcli eval`, a
 * revision's URL for the control plane's eval gate.
 */
import type { EvalCase } from "./case-schema.ts";

export type AgentFetch = (path: string, init?: { method?: string; body?: unknown }) => Promise<Response>;

export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
  /** The turn (1-based) whose run made the call. */
  turn: number;
}

export interface TurnResult {
  input: string;
  status: string;
  /** The last answer of the agent after this turn ("" when none). */
  answer: string;
  error?: string;
}

export interface Conversation {
  threadId: string;
  assistantId: string | null;
  turns: TurnResult[];
  toolCalls: ToolCall[];
  /** The thread's final state values (messages, files, ...). */
  values: Record<string, unknown>;
  /** The status of the last run. */
  status: string;
  answer: string;
}

type Message = {
  type?: string;
  role?: string;
  content?: unknown;
  tool_calls?: Array<{ name: string; args?: unknown }>;
};

/** Plays the case's turns on a new thread of `assistant` ("agent" by default). */
export async function playConversation(
  fetch: AgentFetch,
  opts: { evalCase: EvalCase; assistant?: string },
): Promise<Conversation> {
  const { evalCase } = opts;
  const thread = await call<{ thread_id: string }>(fetch, "/threads", {
    method: "POST",
    body: { metadata: { agentcli_eval: evalCase.name } },
  });
  const turns: TurnResult[] = [];
  const toolCalls: ToolCall[] = [];
  let seen = 0;
  let assistantId: string | null = null;
  let values: Record<string, unknown> = {};
  for (const [i, turn] of evalCase.turns.entries()) {
    if ("decisions" in turn && turns.at(-1)?.status !== "interrupted") {
      throw new Error(
        `turn ${i + 1} gives decisions, but the run before it ${
          turns.length ? `ended "${turns.at(-1)!.status}"` : "does not exist"
        }: decisions answer a run that stopped for an approval`,
      );
    }
    const body = "user" in turn
      ? { input: { messages: [{ role: "user", content: turn.user }] } }
      : { command: { resume: { decisions: turn.decisions.map((d) => typeof d === "string" ? { type: d } : d) } } };
    const run = await call<{ run_id: string; assistant_id?: string }>(fetch, `/threads/${thread.thread_id}/runs`, {
      method: "POST",
      body: { assistant_id: opts.assistant ?? "agent", ...body },
    });
    assistantId = run.assistant_id ?? assistantId;
    const joined = await call<Record<string, unknown>>(fetch, `/threads/${thread.thread_id}/runs/${run.run_id}/join`);
    const ended = await call<{ status: string }>(fetch, `/threads/${thread.thread_id}/runs/${run.run_id}`);
    const state = await call<{ values?: Record<string, unknown>; interrupts?: unknown[] }>(
      fetch,
      `/threads/${thread.thread_id}/state`,
    );
    // A run that stopped at an interrupt (an approval) ends "success" in the Agent API; the
    // thread waits on its interrupts: for a case, that turn ended "interrupted".
    const waiting = (state.interrupts ?? []).length > 0;
    values = state.values ?? {};
    const messages = (Array.isArray(values.messages) ? values.messages : []) as Message[];
    for (const m of messages.slice(seen)) {
      for (const tc of kindOf(m) === "ai" ? m.tool_calls ?? [] : []) {
        toolCalls.push({ name: tc.name, args: (tc.args ?? {}) as Record<string, unknown>, turn: i + 1 });
      }
    }
    seen = messages.length;
    const error = joined && typeof joined.__error__ === "object" ? JSON.stringify(joined.__error__) : undefined;
    turns.push({
      input: "user" in turn ? turn.user : `decisions: ${JSON.stringify(turn.decisions)}`,
      status: ended.status === "success" && waiting ? "interrupted" : ended.status,
      answer: lastAnswer(messages),
      ...(error ? { error } : {}),
    });
  }
  const last = turns.at(-1)!;
  return {
    threadId: thread.thread_id,
    assistantId,
    turns,
    toolCalls,
    values,
    status: last.status,
    answer: last.answer,
  };
}

function kindOf(m: Message): string {
  const t = m.type ?? m.role ?? "";
  return t === "assistant" || t === "AIMessage" || t === "AIMessageChunk" ? "ai" : t;
}

/** The text of the last AI message (its text parts when the content is a list). */
export function lastAnswer(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (kindOf(m) !== "ai") continue;
    const text = textOf(m.content);
    if (text) return text;
  }
  return "";
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => typeof p === "string" ? p : p?.type === "text" ? String(p.text ?? "") : "").join("");
}

async function call<T>(fetch: AgentFetch, path: string, init?: { method?: string; body?: unknown }): Promise<T> {
  const res = await fetch(path, init);
  const text = await res.text();
  if (!res.ok) throw new Error(`${init?.method ?? "GET"} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : null) as T;
}

/** An {@link AgentFetch} over HTTP (a base URL and headers) or over a fetch handler in process. */
export function agentFetch(opts: {
  baseUrl: string;
  headers?: Record<string, string>;
  handler?: (req: Request) => Response | Promise<Response>;
}): AgentFetch {
  return async (path, init) => {
    const req = new Request(new URL(path, opts.baseUrl), {
      method: init?.method ?? "GET",
      headers: { "content-type": "application/json", ...opts.headers },
      ...(init?.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    return opts.handler ? await opts.handler(req) : await globalThis.fetch(req);
  };
}
