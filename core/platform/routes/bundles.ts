/**
 * Bundle downloads (extension): `GET /v2/deployments/{id}/revisions/{rid}/bundle` answers the
 * built bundle of a revision, so a `k8s` listener's pods can fetch what they run. Two
 * credentials are accepted: the tenant's `X-Api-Key`, or `Authorization: Bearer <token>` with
 * the deployment's bundle token, an HMAC of the deployment id that reaches only that
 * deployment's bundles. The control plane puts the token in a Kubernetes Secret of the
 * deployment; the init container reads it from there (it never appears in a pod spec).
 *
 * @example
 * const token = bundleToken(secret, deploymentId);
 * await fetch(bundleUrl(base, deploymentId, revisionId), { headers: { authorization: `Bearer ${token}` } });
 */
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import {
  agentcliError,
  PlatformApiKeyInvalid,
  PlatformBundleCredentialsMissing,
  PlatformBundleTokenInvalid,
  RevisionNoBundle,
} from "../../kernel/index.ts";
import { notFound } from "../api/api-error.ts";
import type { PlatformServices } from "../api/context.ts";
import type { DeploymentRow } from "../api/resources.ts";
import { getDeployment, getDeploymentById, isUuid } from "../store/deployments.ts";
import { getObject } from "../store/objects.ts";
import { getRevision } from "../store/revisions.ts";
import { authenticateKey } from "../store/tenancy.ts";

/** The bundle token of a deployment (stable: pods restarted later still fetch their bundle). */
export function bundleToken(secret: string, deploymentId: string): string {
  return `bdl_${createHmac("sha256", secret).update(`bundle\n${deploymentId}`).digest("base64url")}`;
}

export function bundleUrl(base: string, deploymentId: string, revisionId: string): string {
  return `${base.replace(/\/+$/, "")}/v2/deployments/${deploymentId}/revisions/${revisionId}/bundle`;
}

function sameToken(given: string, expected: string): boolean {
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** The route handler; registered ahead of the API-key middleware because it also takes bundle tokens. */
export function bundleDownload(s: PlatformServices) {
  return async (c: Context): Promise<Response> => {
    const id = c.req.param("deployment_id") ?? "";
    const revisionId = c.req.param("revision_id") ?? "";
    const key = c.req.header("x-api-key");
    const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    let d: DeploymentRow | null;
    if (key) {
      const caller = await authenticateKey(s.sql, key);
      if (!caller) throw agentcliError(PlatformApiKeyInvalid);
      d = await getDeployment(s.sql, caller.tenantId, id);
    } else if (bearer) {
      if (!isUuid(id) || !sameToken(bearer, bundleToken(s.bundleSecret, id))) {
        throw agentcliError(PlatformBundleTokenInvalid);
      }
      d = await getDeploymentById(s.sql, id);
    } else {
      throw agentcliError(PlatformBundleCredentialsMissing);
    }
    if (!d) throw notFound("deployment", id);
    const r = await getRevision(s.sql, d.id, revisionId);
    if (!r) throw notFound("revision", revisionId);
    const object = r.artifact_path ? await getObject(s.sql, r.artifact_path) : null;
    if (!object?.bytes) {
      const why = r.source_revision_config.image_uri
        ? "it runs a container image"
        : `it is ${r.status} and has not been built`;
      throw agentcliError(RevisionNoBundle, { revision: r.id, why });
    }
    const bytes = new Uint8Array(object.bytes);
    return new Response(bytes, {
      status: 200,
      headers: {
        "content-type": "application/gzip",
        "content-length": String(bytes.byteLength),
        "x-agentcli-revision-id": r.id,
        "cache-control": "private, no-store",
      },
    });
  };
}
