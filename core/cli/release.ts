/**
 * The release options of `agentcli deploy` (issue 37): `--gate`, `--gate-evals` and `--canary`
 * shape the new revision's `release`; `--promote`, `--abort` and `--rollback <revision>` act on
 * the project's deployment on the control plane without building anything.
 */
import { relative } from "node:path";
import {
  agentcliError,
  DeploymentNotDeployed,
  type DeployRelease,
  DeployReleaseFlags,
  type Env,
} from "../kernel/index.ts";
import type { LoadedProject } from "../config/index.ts";
import type { CliContext } from "./context.ts";

export interface ReleaseFlags {
  gate: boolean;
  gateEvals: boolean;
  canary?: number;
  promote: boolean;
  abort: boolean;
  rollback?: string;
}

/** The action without a new revision, if one was asked (and the flags go together). */
export function releaseAction(f: ReleaseFlags, target: string): "promote" | "abort" | "rollback" | null {
  const acts = [f.promote && "--promote", f.abort && "--abort", f.rollback !== undefined && "--rollback"].filter(
    (x): x is string => Boolean(x),
  );
  const shaping = [f.gate && "--gate", f.gateEvals && "--gate-evals", f.canary !== undefined && "--canary"].filter(
    (x): x is string => Boolean(x),
  );
  if (acts.length > 1 || (acts.length && shaping.length)) {
    throw agentcliError(DeployReleaseFlags, { flags: [...acts, ...shaping].join(", ") });
  }
  if ((acts.length || shaping.length) && target !== "platform") {
    throw agentcliError(DeployReleaseFlags, { flags: `${[...acts, ...shaping].join(", ")} and --target ${target}` });
  }
  return f.promote ? "promote" : f.abort ? "abort" : f.rollback !== undefined ? "rollback" : null;
}

/** The new revision's `release` from the flags (the project's eval cases with --gate-evals), or null. */
export async function releaseOf(
  f: ReleaseFlags,
  o: { project: LoadedProject; ctx: CliContext },
): Promise<DeployRelease | null> {
  if (!f.gate && !f.gateEvals && f.canary === undefined) return null;
  let evals: Array<Record<string, unknown>> | undefined;
  if (f.gateEvals) {
    const { findCaseFiles, loadCases } = await import("../platform/index.ts");
    const files = findCaseFiles([], { cwd: o.ctx.cwd, root: o.project.root });
    evals = loadCases(files, (file) => relative(o.ctx.cwd, file) || file) as unknown as Array<Record<string, unknown>>;
    o.ctx.io.err(`Gate: ${evals.length} eval case${evals.length === 1 ? "" : "s"} must pass before traffic`);
  }
  return {
    gates: f.gate || evals ? { smoke: f.gate, ...(evals ? { evals } : {}) } : null,
    canary_percent: f.canary ?? null,
  };
}

interface Deployment {
  id: string;
  name: string;
  url: string | null;
  canary: { revision_id: string; percent: number } | null;
}

/** Promote, abort or roll back the project's deployment; prints what happened. */
export async function runReleaseAction(
  ctx: CliContext,
  o: { action: "promote" | "abort" | "rollback"; rollback?: string; name: string; env: Env; base: string },
): Promise<void> {
  // The client alone, not the control plane's server (what ../platform/index.ts loads).
  const { platformClient } = await import("../platform/client.ts");
  const api = platformClient({ env: o.env, base: o.base });
  const page = await api.call<{ resources: Deployment[] }>(
    "GET",
    `/v2/deployments?name_contains=${encodeURIComponent(o.name)}&limit=100`,
  );
  const d = page.resources.find((x) => x.name === o.name);
  if (!d) throw agentcliError(DeploymentNotDeployed, { name: o.name, base: o.base, action: o.action });
  if (o.action === "rollback") {
    const r = await api.call<{ id: string; status: string }>("POST", `/v2/deployments/${d.id}/rollback`, {
      revision_id: o.rollback,
    });
    ctx.io.out(
      `Rolling "${d.name}" back to revision ${o.rollback}: new revision ${r.id} serves its build (no rebuild); follow it with GET /v2/deployments/${d.id}/revisions/${r.id}.`,
    );
    return;
  }
  const canary = d.canary?.revision_id;
  const after = await api.call<Deployment>("POST", `/v2/deployments/${d.id}/canary/${o.action}`);
  ctx.io.out(
    o.action === "promote"
      ? `Promoted revision ${canary} of "${d.name}": it takes all traffic${after.url ? ` at ${after.url}` : ""}.`
      : `Aborted the canary revision ${canary} of "${d.name}": its threads are back on the serving revision.`,
  );
}
