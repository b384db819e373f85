/** Eval cases: reading them, playing them against an Agent API, checking and reporting (`agentcli eval`, eval gates). */
export { evalCaseJsonSchema, evalCaseSchema } from "./case-schema.ts";
export type { EvalCase, EvalCheck } from "./case-schema.ts";
export { findCaseFiles, loadCases, parseCase } from "./cases.ts";
export { type CheckContext, type Grader, transcriptOf } from "./checks.ts";
export { type AgentFetch, agentFetch } from "./conversation.ts";
export { modelGrader, parseVerdict } from "./grader.ts";
export { type CaseResult, runCases } from "./runner.ts";
export { resultsJson, resultsJunit, resultsTable } from "./report.ts";
export { memoryLocation } from "./memory.ts";
