/**
 * The control plane's sandboxes on a `k8s` listener: each is a pod from the sandbox's
 * `image` (kept alive by `sleep infinity`) with a PersistentVolumeClaim as its `/workspace`,
 * so files survive a stop (the pod is deleted, the claim kept) and a resume (a new pod on the
 * same claim); a NetworkPolicy denies it all traffic; no service account token, no service
 * links. Commands are `pods/exec` over the Kubernetes API's WebSocket.
 *
 * @example
 * const rt = new K8sBoxRuntime({ kube: KubeClient.fromKubeconfig(text), namespace: "sandboxes" });
 * await rt.create({ id, image: "python:3", tenantId });
 */
import { randomUUID } from "node:crypto";
import { PassThrough, Writable } from "node:stream";
import type { KubernetesObject, V1Status } from "@kubernetes/client-node";
import type { KubeClient, ObjectRef } from "../compute/k8s-client.ts";
import {
  agentcliError,
  type K8sObject,
  SandboxDeleteFailed,
  SandboxExecFailed,
  SandboxStopFailed,
} from "../../kernel/index.ts";
import {
  type BoxFileError,
  type BoxProcess,
  type BoxRuntime,
  type BoxSpec,
  collect,
  type RunOptions,
} from "./runtime.ts";

const CONTAINER = "sandbox";
const HOME = "/workspace";
const UPLOAD =
  'case "$1" in /*) ;; *) exit 10;; esac; [ -d "$1" ] && exit 11; mkdir -p -- "$(dirname -- "$1")" 2>/dev/null || exit 12; head -c "$2" > "$1" 2>/dev/null || exit 12';
const DOWNLOAD =
  'case "$1" in /*) ;; *) exit 10;; esac; [ -d "$1" ] && exit 11; [ -e "$1" ] || exit 13; [ -r "$1" ] || exit 12; exec cat -- "$1"';
const FILE_ERRORS: Record<number, BoxFileError> = {
  10: "invalid_path",
  11: "is_directory",
  12: "permission_denied",
  13: "file_not_found",
};

export interface SandboxPodInput {
  id: string;
  tenantId: string;
  image: string;
  namespace: string;
  memBytes?: number | null;
  vcpus?: number | null;
  fsCapacityBytes?: number | null;
}

/** The pod's name (and its claim's and policy's): DNS-1123, from the sandbox id. */
export function sandboxPodName(id: string): string {
  return `sandbox-${id.replace(/-/g, "")}`;
}

/** The objects of one sandbox: claim, network policy, pod (in apply order). */
export function renderSandboxManifests(input: SandboxPodInput): K8sObject[] {
  const name = sandboxPodName(input.id);
  const labels = {
    "app.kubernetes.io/managed-by": "agentcli",
    "app.kubernetes.io/component": "sandbox",
    "agentcli.dev/sandbox-id": input.id,
    "agentcli.dev/tenant-id": input.tenantId,
  };
  const metadata = { name, namespace: input.namespace, labels };
  const storageGi = Math.max(1, Math.ceil((input.fsCapacityBytes ?? 5 * 2 ** 30) / 2 ** 30));
  const limits: Record<string, string> = {};
  if (input.memBytes) limits.memory = String(input.memBytes);
  if (input.vcpus) limits.cpu = String(input.vcpus);
  return [
    {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata,
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: `${storageGi}Gi` } } },
    },
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata,
      spec: {
        podSelector: { matchLabels: { "agentcli.dev/sandbox-id": input.id } },
        policyTypes: ["Ingress", "Egress"],
        ingress: [],
        egress: [],
      },
    },
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata,
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        restartPolicy: "Always",
        terminationGracePeriodSeconds: 5,
        containers: [{
          name: CONTAINER,
          image: input.image,
          command: ["sleep", "infinity"],
          workingDir: HOME,
          env: [{ name: "HOME", value: HOME }],
          volumeMounts: [{ name: "home", mountPath: HOME }],
          ...(Object.keys(limits).length ? { resources: { limits, requests: limits } } : {}),
        }],
        volumes: [{ name: "home", persistentVolumeClaim: { claimName: name } }],
      },
    },
  ];
}

export class K8sBoxRuntime implements BoxRuntime {
  readonly kind = "k8s";
  readonly workdir = HOME;
  readonly #kube: KubeClient;
  readonly #namespace: string;
  readonly #waitAttempts: number;
  readonly #waitIntervalMs: number;

  constructor(opts: { kube: KubeClient; namespace: string; waitAttempts?: number; waitIntervalMs?: number }) {
    this.#kube = opts.kube;
    this.#namespace = opts.namespace;
    this.#waitAttempts = opts.waitAttempts ?? 300;
    this.#waitIntervalMs = opts.waitIntervalMs ?? 1000;
  }

  async create(box: BoxSpec): Promise<string> {
    const objects = renderSandboxManifests({ ...box, namespace: this.#namespace });
    for (const o of objects) {
      try {
        await this.#kube.create(o);
      } catch (err) {
        throw new Error(`Cannot create the sandbox's ${o.kind}: ${(err as Error).message}`);
      }
    }
    const pod = sandboxPodName(box.id);
    for (let i = 0; i < this.#waitAttempts; i++) {
      const r = await this.#kube.read<
        KubernetesObject & {
          status?: {
            phase?: string;
            containerStatuses?: Array<{ state?: { waiting?: { reason?: string; message?: string } } }>;
          };
        }
      >(this.#ref("v1", "Pod", pod));
      const phase = r?.status?.phase;
      const waiting = r?.status?.containerStatuses?.[0]?.state?.waiting;
      if (phase === "Running") return box.id;
      if (
        phase === "Failed" || ["ErrImagePull", "ImagePullBackOff", "InvalidImageName"].includes(waiting?.reason ?? "")
      ) {
        throw new Error(
          `Cannot start the sandbox from image "${box.image}": ${waiting?.message ?? waiting?.reason ?? phase}`,
        );
      }
      await new Promise((res) => setTimeout(res, this.#waitIntervalMs));
    }
    throw new Error(`Cannot start the sandbox: its pod ${this.#namespace}/${pod} did not run within the wait`);
  }

  run(id: string, opts: RunOptions): BoxProcess {
    const p = this.#exec(id, [opts.shell ?? "/bin/bash", "-c", opts.command], opts);
    p.end();
    return p;
  }

  async upload(id: string, path: string, content: Uint8Array): Promise<BoxFileError | null> {
    const p = this.#exec(id, ["/bin/sh", "-c", UPLOAD, "sh", path, String(content.byteLength)], { timeoutMs: 300_000 });
    p.write(content);
    p.end();
    const r = await collect(p, 64 * 1024);
    return r.exitCode === 0 ? null : (FILE_ERRORS[r.exitCode ?? -1] ?? "permission_denied");
  }

  async download(id: string, path: string, maxBytes: number) {
    const p = this.#exec(id, ["/bin/sh", "-c", DOWNLOAD, "sh", path], { timeoutMs: 300_000 });
    p.end();
    const r = await collect(p, maxBytes);
    if (r.exitCode !== 0) {
      return { content: null, error: FILE_ERRORS[r.exitCode ?? -1] ?? "permission_denied" } as const;
    }
    if (r.truncated) return { content: null, error: "too_large" } as const;
    return { content: r.stdout, error: null } as const;
  }

  #exec(
    id: string,
    command: string[],
    opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number },
  ): BoxProcess & { write(data: Uint8Array): void; end(): void } {
    const marker = randomUUID();
    const env = { HOME, ...opts.env, AGENTCLI_COMMAND_ID: marker };
    const seconds = opts.timeoutMs ? Math.ceil(opts.timeoutMs / 1000) : 0;
    // `timeout` kills the command at its limit inside the pod (closing the exec stream would not).
    const argv = [
      "sh",
      "-c",
      'cd "$0" && exec "$@"',
      opts.cwd ?? HOME,
      "env",
      ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      ...(seconds ? ["timeout", "-s", "KILL", String(seconds)] : []),
      ...command,
    ];
    const stdin = new PassThrough();
    const stdout = new Channel();
    const stderr = new Channel();
    const started = Date.now();
    let status: V1Status | null = null;
    const socket = this.#kube.exec(this.#namespace, sandboxPodName(id), {
      container: CONTAINER,
      argv,
      stdin,
      stdout: sink(stdout),
      stderr: sink(stderr),
      onStatus: (s) => (status = s),
    });
    const exited = socket.then(
      (ws) =>
        new Promise<{ exitCode: number | null; timedOut: boolean }>((resolve) => {
          ws.on("close", () => {
            stdout.end();
            stderr.end();
            const s = status as V1Status | null;
            const code = s?.status === "Success"
              ? 0
              : Number(s?.details?.causes?.find((c) => c.reason === "ExitCode")?.message ?? NaN);
            const exitCode = Number.isFinite(code) ? code : null;
            resolve({ exitCode, timedOut: seconds > 0 && exitCode === 137 && Date.now() - started >= seconds * 1000 });
          });
        }),
      (err: Error) => {
        stdout.end();
        stderr.end();
        throw agentcliError(SandboxExecFailed, { reason: err.message }, { status: 503, cause: err });
      },
    );
    return {
      stdout,
      stderr,
      exited,
      write: (data) => void stdin.write(data),
      end: () => stdin.end(),
      kill: () => {
        // The command runs on in the pod when the stream closes: find it by its marker and kill it.
        const none = new PassThrough();
        none.end();
        const discard = () => new Writable({ write: (_c, _e, cb) => cb() });
        void this.#kube.exec(this.#namespace, sandboxPodName(id), {
          container: CONTAINER,
          argv: [
            "sh",
            "-c",
            `for p in /proc/[0-9]*; do grep -qsxz "AGENTCLI_COMMAND_ID=${marker}" "$p/environ" && kill -9 "\${p#/proc/}"; done; true`,
          ],
          stdin: none,
          stdout: discard(),
          stderr: discard(),
          onStatus: () => {},
        }).then(
          (killer) => killer.on("close", () => void socket.then((ws) => ws.close(), () => {})),
          () => {},
        );
      },
    };
  }

  async stop(id: string): Promise<void> {
    try {
      await this.#kube.delete(this.#ref("v1", "Pod", sandboxPodName(id)));
    } catch (err) {
      throw agentcliError(SandboxStopFailed, { reason: (err as Error).message }, { status: 503, cause: err });
    }
  }

  async remove(id: string): Promise<void> {
    const name = sandboxPodName(id);
    for (
      const ref of [
        this.#ref("v1", "Pod", name),
        this.#ref("networking.k8s.io/v1", "NetworkPolicy", name),
        this.#ref("v1", "PersistentVolumeClaim", name),
      ]
    ) {
      try {
        await this.#kube.delete(ref);
      } catch (err) {
        throw agentcliError(SandboxDeleteFailed, { reason: (err as Error).message }, { status: 503, cause: err });
      }
    }
  }

  #ref(apiVersion: string, kind: string, name: string): ObjectRef {
    return { apiVersion, kind, metadata: { namespace: this.#namespace, name } };
  }

  async close(): Promise<void> {}
}

/** A Writable feeding a Channel (the exec's output streams). */
function sink(channel: Channel): Writable {
  return new Writable({
    write: (chunk: Uint8Array, _enc, cb) => {
      channel.push(chunk);
      cb();
    },
    final: (cb) => {
      channel.end();
      cb();
    },
  });
}

/** An async iterable of byte chunks fed by pushes. */
class Channel implements AsyncIterable<Uint8Array> {
  #queue: Uint8Array[] = [];
  #done = false;
  #wake: (() => void) | null = null;

  push(chunk: Uint8Array): void {
    this.#queue.push(new Uint8Array(chunk));
    this.#wake?.();
  }

  end(): void {
    this.#done = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      while (this.#queue.length) yield this.#queue.shift()!;
      if (this.#done) return;
      await new Promise<void>((r) => (this.#wake = r));
      this.#wake = null;
    }
  }
}
