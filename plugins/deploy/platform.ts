/**
 * The `platform` deploy target: ships a bundle to an agentcli control plane
 * (`agentcli platform serve`, or a hosted one). Address from `AGENTCLI_PLATFORM_URL`
 * (`agentcli deploy --platform-url` sets it), key from `PLATFORM_API_KEY`.
 *
 * The calls go through core's control-plane client (`platformClient`: the key, the address,
 * the errors). Flow: find the deployment by name (or create it, source `internal_source`), ask for an
 * upload URL, PUT the bundle, PATCH the deployment with the uploaded path and the secrets
 * `deploy` chose (a new revision; exactly those, see `core/cli/deploy-secrets.ts`), then follow the revision, printing each state with the time
 * elapsed, until `DEPLOYED` (or `INTERRUPTED`, superseded by a newer revision after it went
 * live: a warning); any other end is a user error with the reason and the logs.
 */
import {
  agentcliError,
  BundleUploadFailed,
  definePlugin,
  DeployInterrupted,
  type DeployResult,
  type HookLogger,
  type PlatformClient,
  platformClient,
  RevisionFailed,
} from "../../core/index.ts";

const POLL_MS = 500;
const FAILED = new Set(["CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED", "SKIPPED", "INTERRUPTED", "UNKNOWN"]);

/** A revision running as a canary: it waits in DEPLOYING for promote or abort. */
function isCanary(r: Revision): boolean {
  return r.status === "DEPLOYING" && /^canary: /.test(r.status_message ?? "");
}

interface Deployment {
  id: string;
  name: string;
  url: string | null;
  latest_revision_id: string | null;
}

interface Revision {
  id: string;
  status: string;
  status_message: string | null;
}

async function findOrCreate(api: PlatformClient, name: string, log: HookLogger): Promise<Deployment> {
  for (let offset = 0;;) {
    const page = await api.call<{ resources: Deployment[]; offset: number }>(
      "GET",
      `/v2/deployments?name_contains=${encodeURIComponent(name)}&limit=100&offset=${offset}`,
    );
    const found = page.resources.find((d) => d.name === name);
    if (found) return found;
    if (page.resources.length < 100) break;
    offset = page.offset;
  }
  log.info(`Creating deployment "${name}"`);
  return api.call<Deployment>("POST", "/v2/deployments", { name, source: "internal_source" });
}

/** Uploads the bundle to the deployment's signed upload URL; returns the object path the revision names. */
async function upload(
  api: PlatformClient,
  o: { deployment: Deployment; bundle: Uint8Array; signal?: AbortSignal },
): Promise<string> {
  const { deployment, bundle, signal } = o;
  const { upload_url, object_path } = await api.call<{ upload_url: string; object_path: string }>(
    "POST",
    `/v2/deployments/${deployment.id}/upload-url`,
  );
  const res = await fetch(upload_url, {
    method: "PUT",
    body: bundle as Uint8Array<ArrayBuffer>,
    headers: { "content-type": "application/octet-stream" },
    signal,
  }).catch((err: Error) => {
    throw agentcliError(BundleUploadFailed, { reason: err.message });
  });
  if (!res.ok) {
    throw agentcliError(BundleUploadFailed, { reason: `HTTP ${res.status} ${(await res.text()).slice(0, 200)}` });
  }
  return object_path;
}

/** Polls a revision until it is deployed or failed, printing each new status. */
async function follow(
  api: PlatformClient,
  o: { deploymentId: string; revisionId: string; log: HookLogger; signal?: AbortSignal },
): Promise<Revision> {
  const { deploymentId, revisionId, log, signal } = o;
  const started = Date.now();
  let last = "";
  for (;;) {
    if (signal?.aborted) throw agentcliError(DeployInterrupted);
    const r = await api.call<Revision>("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    if (r.status !== last) {
      last = r.status;
      log.info(`  ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s  ${r.status}`);
    }
    if (r.status === "DEPLOYED" || FAILED.has(r.status) || isCanary(r)) return r;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export default definePlugin({
  name: "platform",
  kind: "deploy",
  description: "Deploy to an agentcli control plane (self-hosted or cloud)",
  deploy: {
    target: "platform",
    env: ["PLATFORM_API_KEY"],
    envReason: 'the control plane: an API key from "agentcli platform admin create-key"',
    installsPackages: true,
    sandboxAccess: {
      providers: ["platform"],
      how: "the control plane gives each revision its own sandbox key (AGENTCLI_PLATFORM_SANDBOX_KEY)",
    },
  },
  hooks: {
    async "deploy:target"({ bundle, name, secrets, env, log, signal, release }): Promise<DeployResult | null> {
      const api = platformClient({ env, signal });
      log.info(`Deploying "${name}" to ${api.base}`);
      const deployment = await findOrCreate(api, name, log);
      const objectPath = await upload(api, { deployment, bundle, signal });
      log.info(`Uploaded the bundle (${bundle.byteLength} bytes)`);
      // Exactly the secrets `deploy` chose (core/cli/deploy-secrets.ts, what --dry-run lists): the
      // control-plane key is among them only when the project needs it at run time.
      const patched = await api.call<Deployment>("PATCH", `/v2/deployments/${deployment.id}`, {
        source_revision_config: { source_tarball_path: objectPath },
        secrets,
        ...(release ? { release } : {}),
      });
      const revisionId = patched.latest_revision_id!;
      log.info(`Revision ${revisionId}:`);
      const r = await follow(api, { deploymentId: deployment.id, revisionId, log, signal });
      // It went live, and a newer revision (another deploy, a secrets patch) replaced it before we looked.
      const superseded = r.status === "INTERRUPTED" && /^superseded by revision /.test(r.status_message ?? "");
      if (superseded) {
        log.warn(`revision ${revisionId} went live and was then ${r.status_message} (made since this deploy started)`);
      }
      if (isCanary(r)) {
        const final = await api.call<Deployment>("GET", `/v2/deployments/${deployment.id}`);
        return {
          deploymentId: deployment.id,
          revisionId,
          url: final.url,
          status: "a canary",
          nextSteps: [
            `${r.status_message?.replace(/^canary: /, "It takes ")}.`,
            `Promote it (all traffic): agentcli deploy --promote; abort it: agentcli deploy --abort`,
          ],
        };
      }
      if (r.status !== "DEPLOYED" && !superseded) {
        const logs = await api.call<{ logs: Array<{ kind: string; message: string }> }>(
          "GET",
          `/v2/deployments/${deployment.id}/revisions/${revisionId}/logs`,
        ).catch(() => ({ logs: [] }));
        const tail = logs.logs.slice(-30).map((l) => `  [${l.kind}] ${l.message}`).join("\n");
        throw agentcliError(RevisionFailed, {
          name,
          revision: revisionId,
          status: r.status,
          statusMessage: r.status_message ?? "",
          logs: tail,
        });
      }
      const final = await api.call<Deployment>("GET", `/v2/deployments/${deployment.id}`);
      return { deploymentId: deployment.id, revisionId, url: final.url, status: r.status };
    },
  },
});
