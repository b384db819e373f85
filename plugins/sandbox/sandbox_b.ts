/**
 * Sandbox provider `sandbox_b`: Modal sandboxes (https://modal.com), on Modal's JavaScript
 * SDK (npm `modal`, imported lazily: only a server that uses this provider loads it).
 *
 * - Credentials: a Modal token, `SANDBOX_B_TOKEN_ID` (`ak-...`) and `SANDBOX_B_TOKEN_SECRET`
 *   (`as-...`), passed to the SDK's client; the `MODAL_TOKEN_*` variables and `~/.modal.toml`
 *   of the machine are not used for them.
 * - `SANDBOX_B_SERVER_URL`: Modal's API address (default `https://api.modal.com:443`).
 *   `SANDBOX_B_ENVIRONMENT`: the Modal environment (default: the workspace's default one).
 * - `[sandbox].template` is the name of the Modal App the sandboxes are created in. The default,
 *   `agentcli-default`, is created on first use; any other name must be an existing App (a
 *   typo is then an error, not a stray App).
 * - `[sandbox].image` is a registry image (`python:3`, `ghcr.io/org/image:tag`), built by
 *   Modal (`Image.fromRegistry`).
 * - Commands run in `/workspace` (created when the sandbox is). Sandboxes carry the tags
 *   `agentcli.deployment` (`AGENTCLI_DEPLOYMENT_ID`, else "local"), `agentcli.scope` and
 *   `agentcli.scope-key`, as the other vendors' labels, so leftovers can be found.
 * - A Modal sandbox lives at most 24 hours and ends after an hour without commands; the
 *   server then creates a new one for the thread and tells the agent its files are gone.
 */
import process from "node:process";
import type * as Modal from "modal";
import {
  type AgentcliError,
  agentcliError,
  definePlugin,
  type Env,
  type ExecuteResult,
  ModalAppMissing,
  ModalFailed,
  ModalImageBuildFailed,
  ModalQuota,
  ModalServerUrlInvalid,
  ModalTokenMissing,
  ModalTokenRefused,
  ModalUnreachable,
  type Sandbox,
  type SandboxCreateOptions,
  type SandboxFileError,
  SandboxNotFoundError,
} from "../../core/index.ts";
import { clip, OUTPUT_LIMIT, scrub } from "./vendor.ts";

const DEFAULT_SERVER_URL = "https://api.modal.com:443";
const DEFAULT_TEMPLATE = "agentcli-default";
const WORKDIR = "/workspace";
const DEFAULT_TIMEOUT_MS = 120_000;
/** Modal's maximum sandbox lifetime. */
const LIFETIME_MS = 24 * 3600_000;
const IDLE_TIMEOUT_MS = 3600_000;
/** `bash -c` where the image has bash, else `sh -c`. */
const SHELL = ["sh", "-c", 'if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; fi; exec sh -c "$1"', "sh"];
const TOKEN_VARS = "SANDBOX_B_TOKEN_ID and SANDBOX_B_TOKEN_SECRET";

/** gRPC status codes (nice-grpc's `Status`) the SDK's errors carry. */
const Code = {
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

let sdk: Promise<typeof Modal> | undefined;
const loadSdk = () => (sdk ??= import("modal"));

interface Connection {
  modal: typeof Modal;
  client: Modal.ModalClient;
  serverUrl: string;
  /** Removes the token from a message (a server may echo what it was sent). */
  redact: (text: string) => string;
}

/** One client per token, server and environment: it holds the gRPC channel and the auth token. */
const clients = new Map<string, Modal.ModalClient>();

async function connect(env: Env): Promise<Connection> {
  const tokenId = env.SANDBOX_B_TOKEN_ID?.trim();
  const tokenSecret = env.SANDBOX_B_TOKEN_SECRET?.trim();
  const missing = [!tokenId && "SANDBOX_B_TOKEN_ID", !tokenSecret && "SANDBOX_B_TOKEN_SECRET"].filter(Boolean);
  if (missing.length) {
    throw agentcliError(ModalTokenMissing, { missing: missing as string[], variables: TOKEN_VARS });
  }
  const serverUrl = env.SANDBOX_B_SERVER_URL?.trim() || DEFAULT_SERVER_URL;
  let url: URL | null = null;
  try {
    url = new URL(serverUrl);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw agentcliError(ModalServerUrlInvalid, { value: serverUrl, fallback: DEFAULT_SERVER_URL });
  }
  const environment = env.SANDBOX_B_ENVIRONMENT?.trim() || undefined;
  const modal = await loadSdk();
  const redact = (text: string) => scrub(text, [tokenSecret!, tokenId!]);
  const key = JSON.stringify([tokenId, tokenSecret, serverUrl, environment ?? ""]);
  let client = clients.get(key);
  if (!client) {
    const sink = (msg: string, args: unknown[]) =>
      console.error(
        redact(`modal: ${msg} ${args.map((a) => (a instanceof Error ? a.message : String(a))).join(" ")}`.trim()),
      );
    const logger: Modal.Logger = { debug() {}, info() {}, warn() {}, error: (msg, ...args) => sink(msg, args) };
    // The SDK takes its server address only from MODAL_SERVER_URL (or ~/.modal.toml) when a
    // client is constructed; the constructor is synchronous, so the variable is set for it alone.
    const saved = process.env.MODAL_SERVER_URL;
    process.env.MODAL_SERVER_URL = serverUrl;
    try {
      client = new modal.ModalClient({ tokenId, tokenSecret, environment, logger, logLevel: "error" });
    } finally {
      if (saved === undefined) delete process.env.MODAL_SERVER_URL;
      else process.env.MODAL_SERVER_URL = saved;
    }
    clients.set(key, client);
  }
  return { modal, client, serverUrl, redact };
}

interface GrpcError {
  code: number;
  details: string;
}
const grpcError = (err: unknown): GrpcError | null =>
  err instanceof Error && typeof (err as Partial<GrpcError>).code === "number" &&
    typeof (err as Partial<GrpcError>).details === "string"
    ? (err as unknown as GrpcError)
    : null;

/** A clear error for a failure of Modal's API, naming what to fix; never the token. */
function explain(c: Connection, err: unknown, doing: string): AgentcliError {
  const g = grpcError(err);
  const detail = c.redact(g?.details || (err instanceof Error ? err.message : String(err)));
  if (g?.code === Code.UNAUTHENTICATED || g?.code === Code.PERMISSION_DENIED) {
    return agentcliError(ModalTokenRefused, { doing, detail, variables: TOKEN_VARS });
  }
  if (g?.code === Code.RESOURCE_EXHAUSTED || err instanceof c.modal.ResourceExhaustedError) {
    return agentcliError(ModalQuota, { doing, detail });
  }
  if (g?.code === Code.UNAVAILABLE) return agentcliError(ModalUnreachable, { url: c.serverUrl, doing, detail });
  return agentcliError(ModalFailed, { doing, detail });
}

const isNotFound = (c: Connection, err: unknown) =>
  err instanceof c.modal.NotFoundError || grpcError(err)?.code === Code.NOT_FOUND;

/** Creates the sandbox of a scope key in the App `template`, from the registry image `image`. */
async function create(c: Connection, opts: SandboxCreateOptions): Promise<Modal.Sandbox> {
  const template = opts.template || DEFAULT_TEMPLATE;
  let app: Modal.App;
  try {
    app = await c.client.apps.fromName(template, { createIfMissing: template === DEFAULT_TEMPLATE });
  } catch (err) {
    if (isNotFound(c, err)) {
      const environment = c.client.profile.environment;
      const where = environment ? ` (environment "${environment}", SANDBOX_B_ENVIRONMENT)` : "";
      throw agentcliError(ModalAppMissing, { template, where, fallback: DEFAULT_TEMPLATE });
    }
    throw explain(c, err, `looking up the App "${template}"`);
  }
  const image = c.client.images.fromRegistry(opts.image);
  try {
    await image.build(app);
  } catch (err) {
    if (grpcError(err)) throw explain(c, err, `building the image "${opts.image}"`);
    const why = (err as Error).message.replace(/^Image build for \S+ failed with the exception:\s*/, "").replace(
      /\s+/g,
      " ",
    ).trim();
    throw agentcliError(ModalImageBuildFailed, { image: opts.image, reason: c.redact(why) });
  }
  let sb: Modal.Sandbox;
  try {
    sb = await c.client.sandboxes.create(app, image, {
      timeoutMs: LIFETIME_MS,
      idleTimeoutMs: IDLE_TIMEOUT_MS,
      tags: {
        "agentcli.deployment": opts.env.AGENTCLI_DEPLOYMENT_ID?.trim() || "local",
        "agentcli.scope": opts.scope,
        "agentcli.scope-key": opts.key,
      },
    });
  } catch (err) {
    throw explain(c, err, "creating a sandbox");
  }
  try {
    const mkdir = await sb.exec(["mkdir", "-p", WORKDIR]);
    const code = await mkdir.wait();
    if (code !== 0) throw new Error(`mkdir -p ${WORKDIR} exited with ${code}: ${await mkdir.stderr.readText()}`);
  } catch (err) {
    await sb.terminate().catch(() => {});
    throw explain(c, err, `preparing ${WORKDIR} in the new sandbox`);
  }
  return sb;
}

/** Attaches to a sandbox created before; {@link SandboxNotFoundError} when Modal no longer runs it. */
async function attach(c: Connection, id: string): Promise<Modal.Sandbox> {
  const sb = await c.client.sandboxes.fromId(id);
  let exit: number | null;
  try {
    exit = await sb.poll();
  } catch (err) {
    if (isNotFound(c, err)) throw new SandboxNotFoundError(id);
    throw explain(c, err, `looking up the sandbox "${id}"`);
  }
  if (exit !== null) {
    sb.detach();
    throw new SandboxNotFoundError(
      id,
      `Modal sandbox "${id}" has ended (exit code ${exit}: it was terminated, went idle or reached its lifetime)`,
    );
  }
  return sb;
}

function wrap(c: Connection, sb: Modal.Sandbox): Sandbox {
  const id = sb.sandboxId;
  // A sandbox that ended behind our back fails in several ways (no task, a closed router):
  // ask Modal whether it is still running before calling it an error.
  const gone = async (err: unknown): Promise<Error> => {
    if (err instanceof SandboxNotFoundError) return err;
    try {
      if ((await sb.poll()) !== null) return new SandboxNotFoundError(id);
    } catch (check) {
      if (isNotFound(c, check)) return new SandboxNotFoundError(id);
    }
    if (err instanceof c.modal.ConflictError || isNotFound(c, err)) return new SandboxNotFoundError(id);
    return explain(c, err, "running a command in the sandbox");
  };
  return {
    id,
    async execute(command, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}): Promise<ExecuteResult> {
      // Modal takes whole seconds.
      const limitMs = Math.max(1, Math.ceil(timeoutMs / 1000)) * 1000;
      const started = Date.now();
      let proc: Modal.ContainerProcess<string>;
      try {
        proc = await sb.exec([...SHELL, command], { workdir: WORKDIR, timeoutMs: limitMs });
      } catch (err) {
        throw await gone(err);
      }
      let out = "";
      let readError: unknown = null;
      const readers = [proc.stdout.getReader(), proc.stderr.getReader()];
      const drained = Promise.all(
        readers.map(async (r) => {
          for (;;) {
            const { done, value } = await r.read();
            if (done) return;
            if (out.length <= OUTPUT_LIMIT) out += value;
          }
        }),
      ).catch((err: unknown) => {
        readError = err;
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<"expired">((
        resolve,
      ) => (timer = setTimeout(() => resolve("expired"), limitMs + 5000)));
      let exit: number | "expired";
      try {
        exit = await Promise.race([proc.wait(), expired]);
      } catch (err) {
        // The SDK gives up waiting at the deadline it was given.
        if (Date.now() - started >= limitMs && /deadline/i.test(String((err as Error).message))) exit = "expired";
        else {
          for (const r of readers) r.cancel().catch(() => {});
          throw await gone(err);
        }
      } finally {
        clearTimeout(timer);
      }
      // Killed at the limit: Modal reports the kill as an exit status (137).
      const timedOut = exit === "expired" || Date.now() - started >= limitMs;
      if (timedOut) { for (const r of readers) r.cancel().catch(() => {}); }
      else {
        await drained;
        if (readError) throw await gone(readError);
      }
      const result: ExecuteResult = { ...clip(out), exitCode: timedOut ? null : (exit as number) };
      return timedOut ? { ...result, timedOut: true } : result;
    },
    async uploadFiles(files) {
      const out: Array<{ path: string; error: SandboxFileError | null }> = [];
      for (const f of files) {
        try {
          await sb.filesystem.writeBytes(f.content, f.path);
          out.push({ path: f.path, error: null });
        } catch (err) {
          out.push({ path: f.path, error: await fileError(err) });
        }
      }
      return out;
    },
    async downloadFiles(paths) {
      const out: Array<{ path: string; content: Uint8Array | null; error: SandboxFileError | null }> = [];
      for (const path of paths) {
        try {
          out.push({ path, content: await sb.filesystem.readBytes(path), error: null });
        } catch (err) {
          out.push({ path, content: null, error: await fileError(err) });
        }
      }
      return out;
    },
    async delete() {
      try {
        await sb.terminate();
      } catch (err) {
        if (!isNotFound(c, err)) throw explain(c, err, `terminating the sandbox "${id}"`);
      }
      sb.detach();
    },
    async close() {
      sb.detach();
    },
  };

  /** The per-file error of a filesystem call; throws when the sandbox itself is gone or Modal fails. */
  async function fileError(err: unknown): Promise<SandboxFileError> {
    const m = c.modal;
    if (err instanceof m.SandboxFilesystemNotFoundError) return "file_not_found";
    if (err instanceof m.SandboxFilesystemIsADirectoryError) return "is_directory";
    if (err instanceof m.SandboxFilesystemPermissionError || err instanceof m.SandboxFilesystemFileTooLargeError) {
      return "permission_denied";
    }
    if (err instanceof m.SandboxFilesystemNotADirectoryError || err instanceof m.InvalidError) return "invalid_path";
    if (err instanceof m.SandboxFilesystemError) return "permission_denied";
    throw await gone(err);
  }
}

export default definePlugin({
  name: "sandbox-sandbox_b",
  kind: "sandbox",
  description: "Modal sandboxes (a Modal token: SANDBOX_B_TOKEN_ID and SANDBOX_B_TOKEN_SECRET).",
  sandbox: {
    provider: "sandbox_b",
    env: ["SANDBOX_B_TOKEN_ID", "SANDBOX_B_TOKEN_SECRET"],
    partnerPackage: "modal",
    defaultTemplate: DEFAULT_TEMPLATE,
    // Modal has GPUs, but [sandbox] has no setting to ask for one: these sandboxes get none.
    capabilities: { persistentFiles: true, network: true, gpu: false },
    workdir: WORKDIR,
  },
  hooks: {
    "sandbox:create": async (opts) => {
      const c = await connect(opts.env);
      const sb = opts.sandboxId ? await attach(c, opts.sandboxId) : await create(c, opts);
      return wrap(c, sb);
    },
  },
});
