/**
 * The shape of an eval case (`evals/*.yaml`, `*.yml` or `*.json`): a conversation and the
 * checks its outcome must pass. schema/eval.schema.json is generated from this schema
 * (`agentcli schema --eval`); docs/evals.md describes it.
 */
import { z } from "zod";

const text = z.string().min(1);

/** A decision for one pending tool call of an interrupted run (the harness's approvals). */
const decision = z.union([
  z.enum(["approve", "reject"]),
  z.object({ type: z.enum(["approve", "reject", "edit"]), message: z.string().optional() }).passthrough(),
]);

const turn = z.union([
  z.object({ user: text.describe("A user message") }).strict(),
  z.object({
    decisions: z.array(decision).min(1).describe(
      "Answers to the interrupted run's pending tool calls, in order: approve, reject, or an object",
    ),
  }).strict(),
]);

const argsMatch = z.record(z.string(), z.unknown()).describe(
  "Arguments the call must have: equal values, or {matches: <regex>} for strings",
);

const toolCheck = z.object({ name: text, args: argsMatch.optional() }).strict();

export const evalCheckSchema = z.union([
  z.object({ text_contains: text.describe("The last answer contains this text") }).strict(),
  z.object({ text_not_contains: text.describe("The last answer does not contain this text") }).strict(),
  z.object({ text_matches: text.describe("The last answer matches this regular expression (JavaScript)") }).strict(),
  z.object({ tool_called: toolCheck.describe("A tool was called (with these arguments)") }).strict(),
  z.object({ tool_not_called: toolCheck.describe("No call of this tool (with these arguments)") }).strict(),
  z.object({
    file_exists: text.describe("A file the agent wrote: /memories/... (memory), else its files or sandbox"),
  }).strict(),
  z.object({
    status: z.enum(["success", "error", "interrupted", "timeout"]).describe("How the last run ended"),
  }).strict(),
  z.object({
    json_schema: z.record(z.string(), z.unknown()).describe("The last answer is JSON matching this JSON Schema"),
  }).strict(),
  z.object({
    rubric: text.describe("What a grading model must find true of the conversation; it answers pass or fail"),
  }).strict(),
]);

export const evalCaseSchema = z.object({
  name: text.optional().describe("The case's name (default: the file name without extension)"),
  description: z.string().optional(),
  user: text.optional().describe('The user id the conversation runs as (default "eval")'),
  turns: z.array(turn).min(1).describe("The conversation: user messages and approval decisions, in order"),
  checks: z.array(evalCheckSchema).min(1).describe("What must hold once the conversation ended"),
}).strict();

export type EvalCheck = z.infer<typeof evalCheckSchema>;
export type EvalCaseBody = z.infer<typeof evalCaseSchema>;
export type EvalTurn = EvalCaseBody["turns"][number];

/** One parsed case: its body, its file, and the line of each check (for reports). */
export interface EvalCase extends EvalCaseBody {
  name: string;
  file: string;
  checkLines: number[];
}

/** The JSON Schema of a case file (schema/eval.schema.json). */
export function evalCaseJsonSchema(version: string): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(evalCaseSchema, { target: "draft-2020-12", unrepresentable: "any" });
  return {
    $schema,
    $id: `https://unpkg.com/agentcli@${version}/schema/eval.schema.json`,
    title: "agentcli eval case",
    description: "An eval case of `agentcli eval` (evals/*.yaml, *.yml, *.json): a conversation and its checks.",
    ...rest,
  };
}
