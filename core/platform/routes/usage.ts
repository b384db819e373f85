/**
 * A deployment's usage (extension): `GET /v2/deployments/{id}/usage` asks the deployment's
 * own `GET /usage` (core/server/routes/usage.ts) with its `PLATFORM_API_KEY` secret, as its
 * owner, and answers what it answers (the same query: `group_by`, `since`, `until`, `user`,
 * `limit`). The usage lives in the deployment's database; the control plane keeps none.
 */
import type { Context } from "hono";
import { agentcliError, DeploymentUsageUnavailable } from "../../kernel/index.ts";
import type { AtRestEncryption } from "../../storage/index.ts";
import type { DeploymentRow } from "../api/resources.ts";
import { openSecrets } from "../store/secrets-at-rest.ts";

const QUERY = ["group_by", "since", "until", "user", "limit"];

/** Answers the deployment's usage as the deployment reports it. */
export async function deploymentUsage(
  c: Context,
  o: { deployment: DeploymentRow; encryption: AtRestEncryption },
): Promise<Response> {
  const d = o.deployment;
  const unavailable = (why: string, fix: string, status = 409) =>
    agentcliError(DeploymentUsageUnavailable, { name: d.name, why, fix }, { status });
  if (!d.url) throw unavailable("it has no URL yet (it is not serving)", "Wait until a revision is DEPLOYED.");
  const key = openSecrets(o.encryption, d.secrets).find((s) => s.name === "PLATFORM_API_KEY")?.value;
  if (!key) {
    throw unavailable(
      "it has no PLATFORM_API_KEY secret to ask it as its owner",
      "Patch the deployment with a PLATFORM_API_KEY secret.",
    );
  }
  const url = new URL("/usage", d.url);
  for (const name of QUERY) {
    const v = c.req.query(name);
    if (v !== undefined) url.searchParams.set(name, v);
  }
  let res: Response;
  try {
    res = await fetch(url, { headers: { "x-api-key": key }, signal: c.req.raw.signal });
  } catch (err) {
    throw unavailable(
      `it cannot be reached (${(err as Error).message})`,
      "Check that the deployment is running, then retry.",
      502,
    );
  }
  const body = await res.text();
  if (res.status >= 500 || !(res.headers.get("content-type") ?? "").includes("json")) {
    throw unavailable(`it answered ${res.status}`, "Check the deployment's logs, then retry.", 502);
  }
  return new Response(body, { status: res.status, headers: { "content-type": "application/json" } });
}
