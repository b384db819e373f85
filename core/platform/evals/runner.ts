/**
 * Runs eval cases, at most `concurrency` at once, each through {@link playConversation} and
 * {@link runChecks}; a case whose conversation cannot be played fails with that reason.
 */
import type { EvalCase } from "./case-schema.ts";
import { type CheckContext, type CheckResult, runChecks } from "./checks.ts";
import { type AgentFetch, playConversation, type ToolCall, type TurnResult } from "./conversation.ts";

export interface CaseResult {
  name: string;
  file: string;
  passed: boolean;
  durationMs: number;
  threadId: string | null;
  status: string | null;
  turns: TurnResult[];
  toolCalls: ToolCall[];
  checks: CheckResult[];
  /** Why the conversation could not be played (then no check ran). */
  error?: string;
}

export interface RunCasesOptions {
  cases: readonly EvalCase[];
  /** The Agent API as the case's user (`user` of the case, default "eval"). */
  fetchAs: (user: string) => AgentFetch;
  concurrency?: number;
  assistant?: string;
  checks?: Omit<CheckContext, "conversation">;
  /** Called as each case ends (for progress). */
  onResult?: (result: CaseResult) => void;
}

/** Runs the cases; results are in the cases' order. */
export async function runCases(opts: RunCasesOptions): Promise<CaseResult[]> {
  const results: CaseResult[] = new Array(opts.cases.length);
  let next = 0;
  const worker = async () => {
    while (next < opts.cases.length) {
      const index = next++;
      results[index] = await runCase(opts.cases[index]!, opts);
      opts.onResult?.(results[index]!);
    }
  };
  const n = Math.max(1, Math.min(opts.concurrency ?? 4, opts.cases.length));
  await Promise.all(Array.from({ length: n }, worker));
  return results;
}

async function runCase(evalCase: EvalCase, opts: RunCasesOptions): Promise<CaseResult> {
  const started = performance.now();
  const base = { name: evalCase.name, file: evalCase.file };
  try {
    const conversation = await playConversation(opts.fetchAs(evalCase.user ?? "eval"), {
      evalCase,
      ...(opts.assistant ? { assistant: opts.assistant } : {}),
    });
    const checks = await runChecks(evalCase, { ...opts.checks, conversation });
    return {
      ...base,
      passed: checks.every((c) => c.passed),
      durationMs: Math.round(performance.now() - started),
      threadId: conversation.threadId,
      status: conversation.status,
      turns: conversation.turns,
      toolCalls: conversation.toolCalls,
      checks,
    };
  } catch (err) {
    return {
      ...base,
      passed: false,
      durationMs: Math.round(performance.now() - started),
      threadId: null,
      status: null,
      turns: [],
      toolCalls: [],
      checks: [],
      error: err instanceof Error ? err.message : String(err),
    };
  }
}
