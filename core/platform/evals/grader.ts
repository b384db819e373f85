/**
 * The rubric grader: a chat model (any `provider:model` of the model plugins) asked whether a
 * conversation meets a rubric, answering JSON `{"pass": true|false, "reason": "..."}`.
 */
import type { Env, PluginDriver } from "../../kernel/index.ts";
import { createChatModel } from "../../harness/index.ts";
import type { Grader } from "./checks.ts";

const INSTRUCTIONS =
  `You grade a conversation between a user and an AI agent against a rubric. Answer with JSON only: {"pass": true or false, "reason": "one sentence"}.`;

/** A {@link Grader} on the model `spec`, built on first use. */
export function modelGrader(opts: { spec: string; driver: PluginDriver; env: Env }): Grader {
  let model: ReturnType<typeof createChatModel> | null = null;
  return async ({ rubric, transcript }) => {
    model ??= createChatModel(opts.spec, opts.driver, opts.env);
    const reply = await (await model).invoke([
      { role: "system", content: INSTRUCTIONS },
      { role: "user", content: `Rubric:\n${rubric}\n\nConversation:\n${transcript}` },
    ]);
    const text = typeof reply.content === "string"
      ? reply.content
      : reply.content.map((p) => ("text" in p ? String(p.text) : "")).join("");
    return parseVerdict(text);
  };
}

/** Reads the grader's JSON verdict; anything else fails, quoting what it said. */
export function parseVerdict(text: string): { pass: boolean; reason: string } {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  try {
    const v = JSON.parse(json ?? "") as { pass?: unknown; reason?: unknown };
    if (typeof v.pass === "boolean") return { pass: v.pass, reason: String(v.reason ?? "") };
  } catch { /* below */ }
  return {
    pass: false,
    reason: `the grader did not answer {"pass", "reason"} JSON: ${JSON.stringify(text.slice(0, 200))}`,
  };
}
