/**
 * Sandbox provider `sandbox_a`: Daytona sandboxes, through Daytona's SDK (`@daytonaio/sdk`,
 * imported on first use so startup does not pay for it). Authenticated by `SANDBOX_A_API_KEY`;
 * `SANDBOX_A_API_URL` overrides the API's address (default https://app.daytona.io/api, e.g. a
 * self-hosted Daytona) and `SANDBOX_A_TARGET` its region.
 *
 * - `[sandbox].template` names a Daytona snapshot; left at its default ("agentcli-default"),
 *   the sandbox is created from `[sandbox].image` (Daytona builds and caches it).
 * - Sandboxes carry the labels `agentcli.deployment` (`AGENTCLI_DEPLOYMENT_ID`, else "local"),
 *   `agentcli.scope` and `agentcli.scope-key`, so the scope -> sandbox mapping can be rebuilt
 *   and leaked sandboxes found in Daytona's dashboard or with `daytona.list({ labels })`.
 * - The toolbox daemon runs a command's words without a shell: each command goes to
 *   `sh -c` (bash where present) as base64, so quoting survives.
 * - Stopped sandboxes (ours after the idle time, or Daytona's auto-stop) are started before use.
 */
import { Buffer } from "node:buffer";
import type { Daytona, Sandbox as DaytonaBox } from "@daytonaio/sdk";
import {
  agentcliError,
  DaytonaImageBuildFailed,
  DaytonaSnapshotMissing,
  definePlugin,
  type Env,
  type ExecuteResult,
  type Sandbox,
  type SandboxCreateOptions,
  type SandboxFileError,
  SandboxNotFoundError,
  SandboxVendorKeyMissing,
} from "../../core/index.ts";
import { clip, vendorError, type VendorInfo } from "./vendor.ts";

const PROVIDER = "sandbox_a";
const DEFAULT_TEMPLATE = "agentcli-default";
const DEFAULT_API_URL = "https://app.daytona.io/api";
/** Seconds to wait for a sandbox to be created (an image may have to be built) or started. */
const START_TIMEOUT_S = 600;

type Sdk = typeof import("@daytonaio/sdk");
let sdkPromise: Promise<Sdk> | undefined;
const sdk = () => (sdkPromise ??= import("@daytonaio/sdk"));

const clients = new Map<string, Daytona>();

function vendorOf(env: Env): VendorInfo {
  return {
    name: "Daytona",
    keyVar: "SANDBOX_A_API_KEY",
    keysUrl: "https://app.daytona.io/dashboard/keys",
    urlVar: "SANDBOX_A_API_URL",
    url: env.SANDBOX_A_API_URL?.trim() || DEFAULT_API_URL,
    secrets: [env.SANDBOX_A_API_KEY ?? ""],
  };
}

const statusOf = (err: unknown): number | undefined => (err as { statusCode?: number })?.statusCode ?? undefined;

async function client(env: Env): Promise<Daytona> {
  const key = env.SANDBOX_A_API_KEY?.trim();
  if (!key) {
    const { name: vendor, keyVar: variable, keysUrl } = vendorOf(env);
    throw agentcliError(SandboxVendorKeyMissing, { vendor, variable, keysUrl });
  }
  const v = vendorOf(env);
  const ck = `${v.url}\u0000${key}\u0000${env.SANDBOX_A_TARGET ?? ""}`;
  let c = clients.get(ck);
  if (!c) {
    const { Daytona } = await sdk();
    // Polling instead of the SDK's event socket: one plain HTTP API, no long-lived connection.
    c = new Daytona({
      apiKey: key,
      apiUrl: v.url,
      ...(env.SANDBOX_A_TARGET?.trim() ? { target: env.SANDBOX_A_TARGET.trim() } : {}),
      useDeprecatedPolling: true,
    });
    clients.set(ck, c);
  }
  return c;
}

/** The toolbox daemon splits words itself: hand the command to a shell as base64 (no quoting survives otherwise). */
export function daytonaCommand(command: string): string {
  const b64 = Buffer.from(command, "utf8").toString("base64");
  return `sh -c 'c=$(printf %s ${b64} | base64 -d); if command -v bash >/dev/null 2>&1; then exec bash -c "$c"; else eval "$c"; fi'`;
}

function fileError(err: unknown): SandboxFileError | null {
  const e = err as { statusCode?: number; code?: string; message?: string };
  const msg = String(e?.message ?? "");
  if (e?.code === "FILE_NOT_FOUND" || (e?.statusCode === 404 && /no such file|file not found/i.test(msg))) {
    return "file_not_found";
  }
  if (/is a directory/i.test(msg)) return "is_directory";
  if (e?.code === "FILE_ACCESS_DENIED" || e?.statusCode === 403 || /permission denied/i.test(msg)) {
    return "permission_denied";
  }
  if (e?.code === "INVALID_FILE_PATH") return "invalid_path";
  return null;
}

function wrap(box: DaytonaBox, env: Env): Sandbox {
  const v = vendorOf(env);
  const id = box.id;
  let started = box.state === "started";
  /** Starts the sandbox when it is not running (stopped by us, or by Daytona's auto-stop). */
  const ready = async () => {
    if (started) return;
    try {
      await box.refreshData();
      if (box.state === "destroyed" || box.state === "destroying") throw new SandboxNotFoundError(id);
      if (box.state !== "started") await box.start(START_TIMEOUT_S);
      started = true;
    } catch (err) {
      if (err instanceof SandboxNotFoundError) throw err;
      if (statusOf(err) === 404) throw new SandboxNotFoundError(id);
      throw vendorError(v, { doing: `Cannot start the Daytona sandbox "${id}"`, err, status: statusOf(err) });
    }
  };
  /** Runs a toolbox call; when it fails, finds out whether the sandbox is gone or stopped (then starts it and tries again). */
  const use = async <T>(what: string, op: () => Promise<T>): Promise<T> => {
    await ready();
    try {
      return await op();
    } catch (err) {
      if (err instanceof SandboxNotFoundError) throw err;
      try {
        await box.refreshData();
      } catch (check) {
        if (statusOf(check) === 404) throw new SandboxNotFoundError(id);
      }
      if (box.state === "destroyed" || box.state === "destroying") throw new SandboxNotFoundError(id);
      if (box.state !== "started") {
        started = false;
        await ready();
        try {
          return await op();
        } catch (again) {
          throw vendorError(v, {
            doing: `${what} in the Daytona sandbox "${id}"`,
            err: again,
            status: statusOf(again),
          });
        }
      }
      throw vendorError(v, { doing: `${what} in the Daytona sandbox "${id}"`, err, status: statusOf(err) });
    }
  };
  return {
    id,
    async execute(command, { timeoutMs = 120_000 } = {}): Promise<ExecuteResult> {
      const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
      const r = await use("Cannot run the command", async () => {
        try {
          return await box.process.executeCommand(daytonaCommand(command), undefined, undefined, seconds);
        } catch (err) {
          // The daemon answers 408 when it killed the command at its timeout.
          if (statusOf(err) === 408) return null;
          throw err;
        }
      });
      if (!r) return { output: "", exitCode: null, truncated: false, timedOut: true };
      return { ...clip(r.result ?? ""), exitCode: r.exitCode ?? null };
    },
    async uploadFiles(files) {
      const out: Array<{ path: string; error: SandboxFileError | null }> = [];
      for (const f of files) {
        const error = await use("Cannot write a file", async () => {
          try {
            await box.fs.uploadFile(Buffer.from(f.content), f.path);
            return null;
          } catch (err) {
            const e = fileError(err);
            if (!e) throw err;
            return e;
          }
        });
        out.push({ path: f.path, error });
      }
      return out;
    },
    async downloadFiles(paths) {
      if (!paths.length) return [];
      const got = await use("Cannot read files", () => box.fs.downloadFiles(paths.map((source) => ({ source }))));
      return paths.map((path, i) => {
        const r = got[i]!;
        if (!r.error && r.result !== undefined) {
          return {
            path,
            content: new Uint8Array(typeof r.result === "string" ? Buffer.from(r.result) : r.result),
            error: null,
          };
        }
        const details = r.errorDetails;
        const error: SandboxFileError = details?.statusCode === 404 || /not found|no such file/i.test(r.error ?? "")
          ? "file_not_found"
          : /directory/i.test(r.error ?? "")
          ? "is_directory"
          : details?.statusCode === 403 || /permission/i.test(r.error ?? "")
          ? "permission_denied"
          : "invalid_path";
        return { path, content: null, error };
      });
    },
    async delete() {
      try {
        await box.delete(START_TIMEOUT_S);
      } catch (err) {
        if (statusOf(err) !== 404) {
          throw vendorError(v, { doing: `Cannot delete the Daytona sandbox "${id}"`, err, status: statusOf(err) });
        }
      }
    },
    async stop() {
      try {
        await box.stop(START_TIMEOUT_S);
        started = false;
      } catch (err) {
        if (statusOf(err) === 404) throw new SandboxNotFoundError(id);
        throw vendorError(v, { doing: `Cannot stop the Daytona sandbox "${id}"`, err, status: statusOf(err) });
      }
    },
    async resume() {
      started = false;
      await ready();
    },
  };
}

async function create(opts: SandboxCreateOptions): Promise<Sandbox> {
  const daytona = await client(opts.env);
  const v = vendorOf(opts.env);
  if (opts.sandboxId) {
    try {
      const box = await daytona.get(opts.sandboxId);
      if (box.state === "destroyed" || box.state === "destroying") throw new SandboxNotFoundError(opts.sandboxId);
      return wrap(box, opts.env);
    } catch (err) {
      if (err instanceof SandboxNotFoundError || statusOf(err) === 404) throw new SandboxNotFoundError(opts.sandboxId);
      throw vendorError(v, {
        doing: `Cannot reach the Daytona sandbox "${opts.sandboxId}"`,
        err,
        status: statusOf(err),
      });
    }
  }
  const creation = crypto.randomUUID();
  const labels = {
    "agentcli.deployment": opts.env.AGENTCLI_DEPLOYMENT_ID?.trim() || "local",
    "agentcli.scope": opts.scope,
    "agentcli.scope-key": opts.key,
    "agentcli.creation": creation,
  };
  const fromSnapshot = opts.template !== DEFAULT_TEMPLATE;
  try {
    const box = fromSnapshot
      ? await daytona.create({ snapshot: opts.template, labels }, { timeout: START_TIMEOUT_S })
      : await daytona.create({ image: opts.image, labels }, { timeout: START_TIMEOUT_S });
    return wrap(box, opts.env);
  } catch (err) {
    // A sandbox that failed to build or start still exists at Daytona: find it by its label and delete it.
    const leftovers: DaytonaBox[] = [];
    try {
      for await (const b of daytona.list({ labels: { "agentcli.creation": creation } })) leftovers.push(b);
    } catch {
      // Nothing listed: nothing to clean up that we can see.
    }
    for (const b of leftovers) await b.delete().catch(() => {});
    const status = statusOf(err);
    const msg = String((err as Error)?.message ?? "");
    if (
      fromSnapshot && status !== undefined && status < 500 && /snapshot/i.test(msg) && status !== 401 && status !== 403
    ) {
      throw agentcliError(DaytonaSnapshotMissing, { template: String(opts.template), detail: `${status} ${msg}` });
    }
    if (!fromSnapshot && (leftovers.length || /build|pull|image/i.test(msg)) && status !== 401 && status !== 403) {
      throw agentcliError(DaytonaImageBuildFailed, { image: opts.image, reason: msg });
    }
    throw vendorError(v, { doing: "Cannot create the Daytona sandbox", err, status });
  }
}

export default definePlugin({
  name: "sandbox-sandbox_a",
  kind: "sandbox",
  description: "Daytona sandboxes (SANDBOX_A_API_KEY).",
  sandbox: {
    provider: PROVIDER,
    env: ["SANDBOX_A_API_KEY"],
    partnerPackage: "@daytonaio/sdk",
    defaultTemplate: DEFAULT_TEMPLATE,
    capabilities: { persistentFiles: true, network: true, gpu: false },
  },
  hooks: {
    "sandbox:create": (opts) => create(opts),
  },
});
