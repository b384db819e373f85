/**
 * The checks a revision passes before it takes traffic (issue 37): its server answers `/ok`,
 * a smoke run through the Agent API ends in success, and, when the deployment asked for them,
 * the project's eval cases pass against it. Each step writes a line to the revision's deploy
 * log; the first failure throws with the reason (the rollout then ends DEPLOY_FAILED and the
 * previous revision keeps serving).
 */
import { randomBytes } from "node:crypto";
import type { Env, PluginDriver } from "../../kernel/index.ts";
import { GATE_HEADER, GATE_TOKEN_ENV, GATE_USER_HEADER } from "../../auth/index.ts";
import { readBundle } from "../../bundle/index.ts";
import { resolveModelSpec } from "../../harness/index.ts";
import type { EvalCase } from "../evals/case-schema.ts";
import { type AgentFetch, agentFetch } from "../evals/conversation.ts";
import { modelGrader } from "../evals/grader.ts";
import { type CaseResult, runCases } from "../evals/runner.ts";
import type { RevisionRelease } from "../api/resources.ts";

/** The message of the smoke run. */
export const SMOKE_MESSAGE = "agentcli release check: answer with one short sentence.";

export interface GateJob {
  release: RevisionRelease;
  log: (message: string) => void;
  /** The revision's bundle (for the grading model of rubric checks) and its variables. */
  bundle: Uint8Array | null;
  secrets: Array<{ name: string; value: string }>;
  /** The revision's gate credential ({@link withGateCredential}), when it was given one. */
  gateToken?: string;
  driver?: PluginDriver;
}

/** Runs the gates of `job.release` against the revision at `url`; throws with the reason of the first failure. */
export async function runGates(url: string, job: GateJob): Promise<void> {
  const { release, log } = job;
  const ok = await fetch(`${url}/ok`).then((r) => r.status, (err: Error) => err.message);
  if (ok !== 200) throw new Error(`gate /ok failed: the revision answered ${ok}`);
  log("gate: /ok answered 200");
  const callAs = gateFetch(url, job);
  const call = callAs("eval");
  if (release.gates?.smoke) {
    const [smoke] = await runCases({
      cases: [{
        name: "smoke",
        file: "smoke run",
        turns: [{ user: SMOKE_MESSAGE }],
        checks: [{ status: "success" }],
        checkLines: [1],
      }],
      fetchAs: () => call,
    });
    if (!smoke!.passed) throw new Error(`gate smoke run failed: ${reasonOf(smoke!)}`);
    log(`gate: a smoke run through the Agent API succeeded (${smoke!.durationMs} ms)`);
  }
  const cases = (release.gates?.evals ?? []) as unknown as EvalCase[];
  if (!cases.length) return;
  log(`gate: running ${cases.length} eval case${cases.length === 1 ? "" : "s"}`);
  const results = await runCases({
    cases,
    fetchAs: callAs,
    checks: { grade: await graderFor(job) },
    onResult: (r) =>
      log(`gate: eval ${r.passed ? "passed" : "FAILED"}: ${r.name}${r.passed ? "" : `: ${reasonOf(r)}`}`),
  });
  const failed = results.filter((r) => !r.passed);
  if (failed.length) {
    throw new Error(
      `gate evals failed: ${failed.length} of ${results.length} eval cases failed (${
        failed.map((r) => `${r.name}: ${reasonOf(r)}`).join("; ")
      })`,
    );
  }
  log(`gate: all ${results.length} eval cases passed`);
}

/**
 * The Agent API of the revision as a case's user. An agent without `[auth]` is guarded by its
 * platform key: the gates call as its owner, as its clients do. Under an identity provider,
 * whose users cannot be signed in from here, the revision takes its own gate credential
 * (`withGateCredential`) as the user `agentcli-gate:<user>` (core/auth/gate.ts); other postures
 * ignore that header.
 */
function gateFetch(url: string, job: GateJob): (user: string) => AgentFetch {
  const key = job.secrets.find((s) => s.name === "PLATFORM_API_KEY")?.value;
  return (user) =>
    agentFetch({
      baseUrl: url,
      headers: {
        ...(key ? { "x-api-key": key } : {}),
        ...(job.gateToken ? { [GATE_HEADER]: job.gateToken, [GATE_USER_HEADER]: user } : {}),
      },
    });
}

/**
 * The variables a revision starts with: `secrets`, and for a gated revision a new gate
 * credential of its own (a random 256-bit token); a deployment secret of that name is dropped,
 * as the credential is the control plane's alone. `token` is what the gates send (null: not gated).
 */
export function withGateCredential(
  secrets: Array<{ name: string; value: string }>,
  gated: boolean,
): { secrets: Array<{ name: string; value: string }>; token: string | null } {
  const own = secrets.filter((s) => s.name !== GATE_TOKEN_ENV);
  if (!gated) return { secrets: own, token: null };
  const token = randomBytes(32).toString("base64url");
  return { secrets: [...own, { name: GATE_TOKEN_ENV, value: token }], token };
}

/** Rubrics are graded by the revision's own model, with its own credentials. */
async function graderFor(job: GateJob) {
  if (!job.driver || !job.bundle) return undefined;
  const env: Env = Object.fromEntries(job.secrets.map((s) => [s.name, s.value]));
  const model = (await readBundle(job.bundle)).config.agent.model;
  const driver = job.driver;
  let grader: ReturnType<typeof modelGrader> | null = null;
  return (input: Parameters<ReturnType<typeof modelGrader>>[0]) =>
    (grader ??= modelGrader({ spec: resolveModelSpec(model, driver, env), driver, env }))(input);
}

function reasonOf(r: CaseResult): string {
  if (r.error) return r.error.slice(0, 300);
  return r.checks.filter((c) => !c.passed).map((c) => `${c.check}: ${c.reason}`).join("; ").slice(0, 500);
}
