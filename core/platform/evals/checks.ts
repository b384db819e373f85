/**
 * The checks of an eval case, each against the conversation played: the answer's text, the
 * tool calls, the files the agent wrote, the last run's status, a JSON answer's schema, and a
 * rubric graded by a model. Each result says why it failed.
 */
import { z } from "zod";
import type { EvalCase, EvalCheck } from "./case-schema.ts";
import type { Conversation, ToolCall } from "./conversation.ts";

export interface CheckResult {
  check: string;
  line: number;
  passed: boolean;
  /** Why it failed (or what the grader said). */
  reason?: string;
}

/** Grades a rubric: the model's verdict on the conversation. */
export type Grader = (input: { rubric: string; transcript: string }) => Promise<{ pass: boolean; reason: string }>;

export interface CheckContext {
  conversation: Conversation;
  /** Reads a file the agent wrote under /memories/ (null when absent); other paths are the thread's files. */
  readMemory?: (path: string, who: { assistantId: string | null; user: string }) => Promise<string | null>;
  /** Reads a file of the run's sandbox (null when absent); without it only the thread's files count. */
  readSandbox?: (path: string, threadId: string) => Promise<string | null>;
  grade?: Grader;
}

/** Runs every check of a case, in order. */
export async function runChecks(evalCase: EvalCase, ctx: CheckContext): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const [i, check] of evalCase.checks.entries()) {
    const label = labelOf(check);
    try {
      const reason = await failure(check, { ...ctx, user: evalCase.user ?? "eval" });
      out.push({
        check: label,
        line: evalCase.checkLines?.[i] ?? 1,
        passed: reason === null,
        ...(reason ? { reason } : {}),
      });
    } catch (err) {
      out.push({ check: label, line: evalCase.checkLines?.[i] ?? 1, passed: false, reason: messageOf(err) });
    }
  }
  return out;
}

/** A check as one line: `text_contains "x"`. */
export function labelOf(check: EvalCheck): string {
  const [key, value] = Object.entries(check)[0]!;
  const shown = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value);
  return `${key} ${shown.length > 60 ? `${shown.slice(0, 57)}...` : shown}`;
}

/** Null when the check holds, else why not. */
async function failure(check: EvalCheck, ctx: CheckContext & { user: string }): Promise<string | null> {
  const { conversation: conv } = ctx;
  const answer = conv.answer;
  if ("text_contains" in check) {
    return answer.includes(check.text_contains) ? null : `the answer does not contain it; it was ${quote(answer)}`;
  }
  if ("text_not_contains" in check) {
    return answer.includes(check.text_not_contains) ? `the answer contains it: ${quote(answer)}` : null;
  }
  if ("text_matches" in check) {
    return toRegExp(check.text_matches).test(answer) ? null : `the answer does not match; it was ${quote(answer)}`;
  }
  if ("tool_called" in check) {
    const { name, args } = check.tool_called;
    if (conv.toolCalls.some((c) => callMatches(c, name, args))) return null;
    return `no call of "${name}"${args ? " with those arguments" : ""}; calls were ${listCalls(conv.toolCalls)}`;
  }
  if ("tool_not_called" in check) {
    const { name, args } = check.tool_not_called;
    const hit = conv.toolCalls.find((c) => callMatches(c, name, args));
    return hit ? `"${name}" was called in turn ${hit.turn} with ${JSON.stringify(hit.args)}` : null;
  }
  if ("file_exists" in check) return await fileMissing(check.file_exists, ctx);
  if ("status" in check) {
    return conv.status === check.status ? null : `the last run ended "${conv.status}"${errorOf(conv)}`;
  }
  if ("json_schema" in check) return jsonFailure(answer, check.json_schema);
  if (!ctx.grade) return "no grading model: name one with --grader-model or set the agent's model";
  const verdict = await ctx.grade({ rubric: check.rubric, transcript: transcriptOf(conv) });
  return verdict.pass ? null : `the grader says: ${verdict.reason}`;
}

function errorOf(conv: Conversation): string {
  const e = conv.turns.at(-1)?.error;
  return e ? ` (${e.slice(0, 200)})` : "";
}

function callMatches(call: ToolCall, name: string, args: Record<string, unknown> | undefined): boolean {
  if (call.name !== name) return false;
  return Object.entries(args ?? {}).every(([k, want]) => valueMatches(call.args[k], want));
}

function valueMatches(got: unknown, want: unknown): boolean {
  if (want && typeof want === "object" && !Array.isArray(want) && "matches" in want) {
    return typeof got === "string" && toRegExp(String((want as { matches: unknown }).matches)).test(got);
  }
  if (want && typeof want === "object" && got && typeof got === "object" && !Array.isArray(want)) {
    return Object.entries(want).every(([k, v]) => valueMatches((got as Record<string, unknown>)[k], v));
  }
  return JSON.stringify(got) === JSON.stringify(want);
}

/** `/a.b/i` is a regular expression with flags; anything else is the pattern itself. */
function toRegExp(pattern: string): RegExp {
  const m = /^\/(.*)\/([dgimsuy]*)$/s.exec(pattern);
  return m ? new RegExp(m[1]!, m[2]) : new RegExp(pattern);
}

async function fileMissing(path: string, ctx: CheckContext & { user: string }): Promise<string | null> {
  const { conversation: conv } = ctx;
  if (path.startsWith("/memories/")) {
    if (!ctx.readMemory) return `memory cannot be read here (${path})`;
    return (await ctx.readMemory(path, { assistantId: conv.assistantId, user: ctx.user })) === null
      ? `no file ${path} in memory`
      : null;
  }
  const files = conv.values.files;
  if (files && typeof files === "object" && path in files) return null;
  if (ctx.readSandbox && (await ctx.readSandbox(path, conv.threadId)) !== null) return null;
  const names = files && typeof files === "object" ? Object.keys(files) : [];
  return `no file ${path}; the agent's files are ${names.length ? names.join(", ") : "none"}`;
}

function jsonFailure(answer: string, schema: Record<string, unknown>): string | null {
  const body = /```(?:json)?\s*([\s\S]*?)```/.exec(answer)?.[1] ?? answer;
  let value: unknown;
  try {
    value = JSON.parse(body.trim());
  } catch {
    return `the answer is not JSON: ${quote(answer)}`;
  }
  const parsed = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(value);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0]!;
  return `the JSON does not match the schema: ${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`;
}

/** The conversation as the grader reads it. */
export function transcriptOf(conv: Conversation): string {
  const lines: string[] = [];
  for (const [i, t] of conv.turns.entries()) {
    lines.push(`USER: ${t.input}`);
    for (const c of conv.toolCalls.filter((c) => c.turn === i + 1)) {
      lines.push(`TOOL CALL: ${c.name} ${JSON.stringify(c.args)}`);
    }
    lines.push(`AGENT (${t.status}): ${t.answer}`);
  }
  return lines.join("\n");
}

function listCalls(calls: readonly ToolCall[]): string {
  return calls.length ? calls.map((c) => `${c.name}(${JSON.stringify(c.args).slice(0, 80)})`).join(", ") : "none";
}

function quote(text: string): string {
  return JSON.stringify(text.length > 160 ? `${text.slice(0, 157)}...` : text);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
