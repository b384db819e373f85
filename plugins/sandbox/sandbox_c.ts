/**
 * Sandbox provider `sandbox_c`: Runloop devboxes, through Runloop's SDK
 * (`@runloop/api-client`, imported on first use so startup does not pay for it).
 * Authenticated by `SANDBOX_C_API_KEY`; `SANDBOX_C_API_URL` overrides the API's address
 * (default https://api.runloop.ai).
 *
 * - `[sandbox].template` names a Runloop blueprint (its latest build); left at its default
 *   ("agentcli-default"), the devbox is created from a blueprint whose base is
 *   `[sandbox].image`: the blueprint `agentcli-image-<image>` (`FROM <image>`), built once on
 *   first use and reused.
 * - Devboxes carry the metadata `agentcli.deployment` (`AGENTCLI_DEPLOYMENT_ID`, else
 *   "local"), `agentcli.scope` and `agentcli.scope-key`, so the scope -> devbox mapping can
 *   be rebuilt and leaked devboxes found.
 * - A devbox suspends itself after an hour idle (files kept) instead of shutting down at
 *   Runloop's keep-alive limit; a suspended devbox is resumed before use. Stop is suspend;
 *   delete is shutdown.
 * - Runloop has no per-command time limit: a command still running at its timeout is killed.
 */
import { Buffer } from "node:buffer";
import type Runloop from "@runloop/api-client";
import type { DevboxView } from "@runloop/api-client/resources/devboxes/devboxes";
import {
  agentcliError,
  definePlugin,
  type Env,
  type ExecuteResult,
  RunloopBlueprintBuildFailed,
  RunloopBlueprintMissing,
  type Sandbox,
  type SandboxCreateOptions,
  type SandboxFileError,
  SandboxNotFoundError,
  SandboxVendorKeyMissing,
} from "../../core/index.ts";
import { clip, vendorError, type VendorInfo } from "./vendor.ts";

const PROVIDER = "sandbox_c";
const DEFAULT_TEMPLATE = "agentcli-default";
const DEFAULT_API_URL = "https://api.runloop.ai";
/** Milliseconds to wait for a devbox to run, or a blueprint to build. */
const START_TIMEOUT_MS = 900_000;
/** Idle seconds after which Runloop suspends a devbox by itself (ours stop it sooner: AGENTCLI_SANDBOX_IDLE_SECONDS). */
const IDLE_SUSPEND_S = 3600;
/** Lines of output asked for (Runloop returns the last `last_n` lines; default 100). */
const LAST_N = "100000";

type Sdk = typeof import("@runloop/api-client");
let sdkPromise: Promise<Sdk> | undefined;
const sdk = () => (sdkPromise ??= import("@runloop/api-client"));
const clients = new Map<string, Runloop>();

function vendorOf(env: Env): VendorInfo {
  return {
    name: "Runloop",
    keyVar: "SANDBOX_C_API_KEY",
    keysUrl: "https://platform.runloop.ai/settings",
    urlVar: "SANDBOX_C_API_URL",
    url: env.SANDBOX_C_API_URL?.trim() || DEFAULT_API_URL,
    secrets: [env.SANDBOX_C_API_KEY ?? ""],
  };
}

/** The HTTP status of an SDK error; undefined when Runloop did not answer. */
const statusOf = (err: unknown): number | undefined => {
  const s = (err as { status?: unknown })?.status;
  return typeof s === "number" ? s : undefined;
};

async function client(env: Env): Promise<Runloop> {
  const key = env.SANDBOX_C_API_KEY?.trim();
  if (!key) {
    const { name: vendor, keyVar: variable, keysUrl } = vendorOf(env);
    throw agentcliError(SandboxVendorKeyMissing, { vendor, variable, keysUrl });
  }
  const v = vendorOf(env);
  const ck = `${v.url}\u0000${key}`;
  let c = clients.get(ck);
  if (!c) {
    const mod = await sdk();
    const Client = (mod.default ?? mod.Runloop) as unknown as typeof Runloop;
    c = new Client({ bearerToken: key, baseURL: v.url, maxRetries: 2 });
    clients.set(ck, c);
  }
  return c;
}

/** The blueprint name of an image: `agentcli-image-` and the image with other characters as `-`. */
export function imageBlueprintName(image: string): string {
  return `agentcli-image-${image.toLowerCase().replace(/[^a-z0-9._-]+/g, "-")}`;
}

const isGone = (d: DevboxView) => d.status === "shutdown" || d.status === "failure";

/**
 * The calls on one devbox: each waits until the devbox runs (resuming it when it is suspended,
 * by us or by its idle policy) and turns a failure into a {@link SandboxNotFoundError} or a
 * vendor error that says what to fix.
 */
class Devbox {
  readonly rl: Runloop;
  readonly id: string;
  readonly v: VendorInfo;
  /** False until a call finds it running again after a suspend. */
  running: boolean;

  constructor(rl: Runloop, devbox: DevboxView, v: VendorInfo) {
    this.rl = rl;
    this.id = devbox.id;
    this.v = v;
    this.running = devbox.status === "running";
  }

  async retrieve(): Promise<DevboxView> {
    const { rl, id, v } = this;
    try {
      const d = await rl.devboxes.retrieve(id);
      if (isGone(d)) throw new SandboxNotFoundError(id);
      return d;
    } catch (err) {
      if (err instanceof SandboxNotFoundError || statusOf(err) === 404) throw new SandboxNotFoundError(id);
      throw vendorError(v, { doing: `Cannot reach the Runloop devbox "${id}"`, err, status: statusOf(err) });
    }
  }

  /** Resumes the devbox when it is suspended (by us, or by its idle policy) and waits until it runs. */
  async ready(): Promise<void> {
    const { rl, id, v } = this;
    if (this.running) return;
    const d = await this.retrieve();
    try {
      if (d.status === "suspended") await rl.devboxes.resume(id);
      if (d.status !== "running") await rl.devboxes.awaitRunning(id, { longPoll: { timeoutMs: START_TIMEOUT_MS } });
    } catch (err) {
      if (statusOf(err) === 404) throw new SandboxNotFoundError(id);
      throw vendorError(v, { doing: `Cannot resume the Runloop devbox "${id}"`, err, status: statusOf(err) });
    }
    this.running = true;
  }

  /** Runs a call; when it fails, finds out whether the devbox is gone, or suspended (then resumes it and tries again). */
  async use<T>(what: string, op: () => Promise<T>): Promise<T> {
    const doing = `${what} in the Runloop devbox "${this.id}"`;
    await this.ready();
    try {
      return await op();
    } catch (err) {
      const d = await this.retrieve();
      if (d.status !== "running") {
        this.running = false;
        await this.ready();
        try {
          return await op();
        } catch (again) {
          throw vendorError(this.v, { doing, err: again, status: statusOf(again) });
        }
      }
      throw vendorError(this.v, { doing, err, status: statusOf(err) });
    }
  }

  /** A file call: a per-file error (missing file, a directory) is a result, not a failure, when the devbox runs. */
  async fileOp<T>(what: string, op: () => Promise<T>): Promise<T | SandboxFileError> {
    await this.ready();
    try {
      return await op();
    } catch (err) {
      const status = statusOf(err);
      const msg = String((err as Error)?.message ?? "");
      if (status === 404 || status === 400) {
        const d = await this.retrieve();
        if (d.status === "running") {
          if (/directory/i.test(msg)) return "is_directory";
          if (status === 404 || /not found|no such file/i.test(msg)) return "file_not_found";
          return /permission/i.test(msg) ? "permission_denied" : "invalid_path";
        }
      }
      return await this.use(what, op);
    }
  }
}

/** Runs `command` (stderr joined to stdout), following it past Runloop's long polls until it ends or `timeoutMs` passes. */
async function runCommand(box: Devbox, command: string, timeoutMs: number): Promise<ExecuteResult> {
  const { rl, id, v } = box;
  const deadline = Date.now() + timeoutMs;
  // stderr joins stdout, in order, as the contract wants one combined output.
  const wrapped = `exec 2>&1\n${command}`;
  let ex = await box.use(
    "Cannot run the command",
    () =>
      rl.devboxes.execute(id, {
        command: wrapped,
        last_n: LAST_N,
        optimistic_timeout: Math.max(1, Math.min(25, Math.ceil(timeoutMs / 1000))),
      }),
  );
  while (ex.status !== "completed") {
    const left = deadline - Date.now();
    if (left <= 0) {
      const killed = await rl.devboxes.executions.kill(id, ex.execution_id).catch(() => null);
      return { ...clip(killed?.stdout ?? ""), exitCode: null, timedOut: true };
    }
    try {
      ex = await rl.devboxes.waitForCommand(id, ex.execution_id, { statuses: ["completed"], last_n: LAST_N }, {
        timeout: left + 30_000,
        maxRetries: 0,
        signal: AbortSignal.timeout(left),
      });
    } catch (err) {
      // 408: the long poll ended with the command still running; an abort: our deadline.
      if (statusOf(err) === 408 || (err as Error)?.name === "APIUserAbortError" || Date.now() >= deadline) continue;
      if (statusOf(err) === 404) await box.retrieve();
      throw vendorError(v, {
        doing: `Cannot follow the command in the Runloop devbox "${id}"`,
        err,
        status: statusOf(err),
      });
    }
  }
  const out = clip(ex.stdout ?? "");
  return {
    output: out.output,
    exitCode: ex.exit_status ?? null,
    truncated: out.truncated || Boolean(ex.stdout_truncated),
  };
}

function wrap(rl: Runloop, devbox: DevboxView, env: Env): Sandbox {
  const box = new Devbox(rl, devbox, vendorOf(env));
  const { id, v } = box;
  return {
    id,
    execute(command, { timeoutMs = 120_000 } = {}): Promise<ExecuteResult> {
      return runCommand(box, command, timeoutMs);
    },
    async uploadFiles(files) {
      const { toFile } = await sdk();
      const out: Array<{ path: string; error: SandboxFileError | null }> = [];
      for (const f of files) {
        const r = await box.fileOp("Cannot write a file", async () => {
          await rl.devboxes.uploadFile(id, {
            path: f.path,
            file: await toFile(Buffer.from(f.content), f.path.split("/").pop() || "file"),
          });
          return null;
        });
        out.push({ path: f.path, error: r });
      }
      return out;
    },
    async downloadFiles(paths) {
      const out: Array<{ path: string; content: Uint8Array | null; error: SandboxFileError | null }> = [];
      for (const path of paths) {
        const r = await box.fileOp(
          "Cannot read a file",
          async () => new Uint8Array(await (await rl.devboxes.downloadFile(id, { path })).arrayBuffer()),
        );
        out.push(typeof r === "string" ? { path, content: null, error: r } : { path, content: r, error: null });
      }
      return out;
    },
    async delete() {
      try {
        await rl.devboxes.shutdown(id);
      } catch (err) {
        const status = statusOf(err);
        if (status === 404) return;
        // Shutting down a devbox that is already shut down is not an error.
        const d = await rl.devboxes.retrieve(id).catch(() => null);
        if (d && isGone(d)) return;
        throw vendorError(v, { doing: `Cannot shut down the Runloop devbox "${id}"`, err, status });
      }
    },
    async stop() {
      try {
        await rl.devboxes.suspend(id);
        await rl.devboxes.awaitSuspended(id, { longPoll: { timeoutMs: START_TIMEOUT_MS } });
        box.running = false;
      } catch (err) {
        if (statusOf(err) === 404) throw new SandboxNotFoundError(id);
        const d = await box.retrieve();
        if (d.status === "suspended") return void (box.running = false);
        throw vendorError(v, { doing: `Cannot suspend the Runloop devbox "${id}"`, err, status: statusOf(err) });
      }
    },
    async resume() {
      box.running = false;
      await box.ready();
    },
  };
}

const building = new Map<string, Promise<string>>();

/**
 * The blueprint a devbox of `image` starts from: the newest built one of its name, else one
 * being built (by another replica), else built now. Concurrent creations in this process share one build.
 */
function imageBlueprint(rl: Runloop, image: string): Promise<string> {
  const name = imageBlueprintName(image);
  let p = building.get(name);
  if (!p) {
    p = findOrBuild(rl, image, name).finally(() => building.delete(name));
    building.set(name, p);
  }
  return p;
}

async function findOrBuild(rl: Runloop, image: string, name: string): Promise<string> {
  const same = [];
  for await (const b of rl.blueprints.list({ name })) if (b.name === name) same.push(b);
  same.sort((a, b) => b.create_time_ms - a.create_time_ms);
  const built = same.find((b) => b.status === "build_complete");
  if (built) return built.id;
  const pending = same.find((b) => ["queued", "provisioning", "building"].includes(b.status));
  const id = pending?.id ?? (await rl.blueprints.create({ name, dockerfile: `FROM ${image}\n` })).id;
  try {
    return (await rl.blueprints.awaitBuildComplete(id, { longPoll: { timeoutMs: START_TIMEOUT_MS } })).id;
  } catch (err) {
    if (statusOf(err) !== undefined) throw err;
    const b = await rl.blueprints.retrieve(id).catch(() => null);
    const state = b ? ` (blueprint ${b.id}: ${b.status}${b.failure_reason ? `, ${b.failure_reason}` : ""})` : "";
    throw agentcliError(RunloopBlueprintBuildFailed, { image, state });
  }
}

async function create(opts: SandboxCreateOptions): Promise<Sandbox> {
  const rl = await client(opts.env);
  const v = vendorOf(opts.env);
  if (opts.sandboxId) {
    try {
      const d = await rl.devboxes.retrieve(opts.sandboxId);
      if (isGone(d)) throw new SandboxNotFoundError(opts.sandboxId);
      return wrap(rl, d, opts.env);
    } catch (err) {
      if (err instanceof SandboxNotFoundError || statusOf(err) === 404) throw new SandboxNotFoundError(opts.sandboxId);
      throw vendorError(v, {
        doing: `Cannot reach the Runloop devbox "${opts.sandboxId}"`,
        err,
        status: statusOf(err),
      });
    }
  }
  const fromBlueprint = opts.template !== DEFAULT_TEMPLATE;
  let created: DevboxView | null = null;
  try {
    const source = fromBlueprint
      ? { blueprint_name: opts.template }
      : { blueprint_id: await imageBlueprint(rl, opts.image) };
    created = await rl.devboxes.create({
      ...source,
      name: `agentcli-${opts.key.replace(/[^A-Za-z0-9_-]+/g, "-")}`,
      metadata: {
        "agentcli.deployment": opts.env.AGENTCLI_DEPLOYMENT_ID?.trim() || "local",
        "agentcli.scope": opts.scope,
        "agentcli.scope-key": opts.key,
      },
      launch_parameters: { after_idle: { idle_time_seconds: IDLE_SUSPEND_S, on_idle: "suspend" } },
    });
    const d = created.status === "running"
      ? created
      : await rl.devboxes.awaitRunning(created.id, { longPoll: { timeoutMs: START_TIMEOUT_MS } });
    return wrap(rl, d, opts.env);
  } catch (err) {
    // A devbox that failed to start still counts at Runloop: shut it down.
    if (created) await rl.devboxes.shutdown(created.id).catch(() => {});
    const status = statusOf(err);
    const msg = String((err as Error)?.message ?? "");
    if (fromBlueprint && (status === 400 || status === 404) && /blueprint/i.test(msg)) {
      throw agentcliError(RunloopBlueprintMissing, { template: String(opts.template), detail: msg });
    }
    if (status === undefined && /could not build a blueprint/.test(msg)) throw err;
    throw vendorError(v, { doing: "Cannot create the Runloop devbox", err, status });
  }
}

export default definePlugin({
  name: "sandbox-sandbox_c",
  kind: "sandbox",
  description: "Runloop devboxes (SANDBOX_C_API_KEY).",
  sandbox: {
    provider: PROVIDER,
    env: ["SANDBOX_C_API_KEY"],
    partnerPackage: "@runloop/api-client",
    defaultTemplate: DEFAULT_TEMPLATE,
    capabilities: { persistentFiles: true, network: true, gpu: false },
  },
  hooks: {
    "sandbox:create": (opts) => create(opts),
  },
});
