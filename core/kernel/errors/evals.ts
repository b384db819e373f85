/**
 * The error catalogue: `agentcli eval` (CONFIG_INVALID, FILE_FAILED, EVALS_FAILED, ...): its case
 * files and its result. Entries of one area; core/kernel/errors-data.ts lists every area (its
 * `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** An eval case file that is not valid YAML/JSON or not a case (`where`: file:line). */
export const EvalCaseInvalid = {
  name: "EvalCaseInvalid",
  code: "CONFIG_INVALID",
  title: "An eval case file is malformed or is not a case.",
  message: (v: { where: string; problem: string }) => `${v.where}: ${v.problem}`,
  hint:
    'Eval cases are YAML or JSON files in evals/ (schema/eval.schema.json, "docs/evals.md"); fix the line named and run again.',
} as const satisfies ErrorData;

/** A path given to `agentcli eval` that does not exist. */
export const EvalPathMissing = {
  name: "EvalPathMissing",
  code: "FILE_FAILED",
  title: "A file or folder given to `agentcli eval` does not exist.",
  message: (v: { path: string }) => `Cannot run the evals: "${v.path}" does not exist`,
  hint: "Name case files or folders of the project (default: its evals/ folder).",
} as const satisfies ErrorData;

/** No case files where `agentcli eval` looked. */
export const EvalNoCases = {
  name: "EvalNoCases",
  code: "FILE_FAILED",
  title: "`agentcli eval` found no case files.",
  message: (v: { where: string }) => `Cannot run the evals: no case files (*.yaml, *.yml, *.json) in ${v.where}`,
  hint: 'Add a case to evals/ ("agentcli init" writes an example; "docs/evals.md" describes the format).',
} as const satisfies ErrorData;

/** Two case files with the same name. */
export const EvalCaseDuplicate = {
  name: "EvalCaseDuplicate",
  code: "CONFIG_INVALID",
  title: "Two eval cases have the same name.",
  message: (v: { name: string; first: string; second: string }) =>
    `Eval case "${v.name}" is defined twice: ${v.first} and ${v.second}`,
  hint: "Give each case its own `name` (by default its file name).",
} as const satisfies ErrorData;

/** Some cases failed (the table, JUnit and JSON say which and why). */
export const EvalsFailed = {
  name: "EvalsFailed",
  code: "EVALS_FAILED",
  title: "One or more eval cases failed.",
  message: (v: { failed: number; total: number }) => `${v.failed} of ${v.total} eval cases failed`,
  hint: "The table above says which check failed and why; the turns and tool calls are in --json.",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const EVALS_ERRORS: readonly ErrorData[] = [
  EvalCaseInvalid,
  EvalPathMissing,
  EvalNoCases,
  EvalCaseDuplicate,
  EvalsFailed,
];
