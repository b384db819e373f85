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
import { objectPath, type KubeClient } from "./k8s-client.ts";
import type { K8sObject } from "./k8s-manifests.ts";
import { collect, type BoxFileError, type BoxProcess, type BoxRuntime, type BoxSpec, type RunOptions } from "./sandbox-runtime.ts";

const CONTAINER = "sandbox";
const HOME = "/workspace";
const UPLOAD = 'case "$1" in /*) ;; *) exit 10;; esac; [ -d "$1" ] && exit 11; mkdir -p -- "$(dirname -- "$1")" 2>/dev/null || exit 12; head -c "$2" > "$1" 2>/dev/null || exit 12';
const DOWNLOAD = 'case "$1" in /*) ;; *) exit 10;; esac; [ -d "$1" ] && exit 11; [ -e "$1" ] || exit 13; [ -r "$1" ] || exit 12; exec cat -- "$1"';
const FILE_ERRORS: Record<number, BoxFileError> = { 10: "invalid_path", 11: "is_directory", 12: "permission_denied", 13: "file_not_found" };

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
    "app.kubernetes.io/managed-by": "agentcli", "app.kubernetes.io/component": "sandbox",
    "agentcli.dev/sandbox-id": input.id, "agentcli.dev/tenant-id": input.tenantId,
  };
  const metadata = { name, namespace: input.namespace, labels };
  const storageGi = Math.max(1, Math.ceil((input.fsCapacityBytes ?? 5 * 2 ** 30) / 2 ** 30));
  const limits: Record<string, string> = {};
  if (input.memBytes) limits.memory = String(input.memBytes);
  if (input.vcpus) limits.cpu = String(input.vcpus);
  return [
    {
      apiVersion: "v1", kind: "PersistentVolumeClaim", metadata,
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: `${storageGi}Gi` } } },
    },
    {
      apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata,
      spec: { podSelector: { matchLabels: { "agentcli.dev/sandbox-id": input.id } }, policyTypes: ["Ingress", "Egress"], ingress: [], egress: [] },
    },
    {
      apiVersion: "v1", kind: "Pod", metadata,
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        restartPolicy: "Always",
        terminationGracePeriodSeconds: 5,
        containers: [{
          name: CONTAINER, image: input.image, command: ["sleep", "infinity"], workingDir: HOME,
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
      const r = await this.#kube.request("POST", objectPath({ ...o, metadata: { namespace: o.metadata.namespace } }), o);
      if (r.status >= 300 && r.status !== 409) throw new Error(`Cannot create the sandbox's ${o.kind}: the Kubernetes API answered ${r.status}${r.body?.message ? `: ${r.body.message}` : ""}`);
    }
    const pod = sandboxPodName(box.id);
    for (let i = 0; i < this.#waitAttempts; i++) {
      const r = await this.#kube.request("GET", `/api/v1/namespaces/${this.#namespace}/pods/${pod}`);
      const phase = r.body?.status?.phase;
      const waiting = r.body?.status?.containerStatuses?.[0]?.state?.waiting;
      if (phase === "Running") return box.id;
      if (phase === "Failed" || ["ErrImagePull", "ImagePullBackOff", "InvalidImageName"].includes(waiting?.reason)) {
        throw new Error(`Cannot start the sandbox from image "${box.image}": ${waiting?.message ?? waiting?.reason ?? phase}`);
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
    if (r.exitCode !== 0) return { content: null, error: FILE_ERRORS[r.exitCode ?? -1] ?? "permission_denied" } as const;
    if (r.truncated) return { content: null, error: "too_large" } as const;
    return { content: r.stdout, error: null } as const;
  }

  #exec(id: string, command: string[], opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number }): BoxProcess & { write(data: Uint8Array): void; end(): void } {
    const marker = randomUUID();
    const env = { HOME, ...opts.env, AGENTCLI_COMMAND_ID: marker };
    const seconds = opts.timeoutMs ? Math.ceil(opts.timeoutMs / 1000) : 0;
    // `timeout` kills the command at its limit inside the pod (closing the exec stream would not).
    const argv = [
      "sh", "-c", 'cd "$0" && exec "$@"', opts.cwd ?? HOME,
      "env", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...(seconds ? ["timeout", "-s", "KILL", String(seconds)] : []), ...command,
    ];
    const ws = this.#kube.exec(this.#namespace, sandboxPodName(id), { container: CONTAINER, argv });
    const stdout = new Channel();
    const stderr = new Channel();
    const started = Date.now();
    let status: { status?: string; details?: { causes?: Array<{ reason?: string; message?: string }> }; message?: string } | null = null;
    const pending: Uint8Array[] = [];
    let ended = false;
    let v5 = false;
    const send = (frame: Uint8Array) => (ws.readyState === ws.OPEN ? ws.send(frame) : pending.push(frame));
    const exited = new Promise<{ exitCode: number | null; timedOut: boolean }>((resolve, reject) => {
      ws.on("open", () => {
        v5 = ws.protocol === "v5.channel.k8s.io";
        for (const f of pending.splice(0)) ws.send(f);
        if (ended && v5) ws.send(Uint8Array.of(255, 0));
      });
      ws.on("message", (data: Buffer) => {
        const channel = data[0];
        const body = data.subarray(1);
        if (channel === 1) stdout.push(body);
        else if (channel === 2) stderr.push(body);
        else if (channel === 3) {
          try {
            status = JSON.parse(body.toString("utf8"));
          } catch {}
        }
      });
      ws.on("unexpected-response", (_req, res) => {
        res.resume();
        stdout.end();
        stderr.end();
        reject(new Error(`Cannot run a command in the sandbox's pod: the Kubernetes API answered ${res.statusCode}`));
      });
      ws.on("error", (err) => {
        stdout.end();
        stderr.end();
        reject(new Error(`Cannot run a command in the sandbox's pod: ${err.message}`));
      });
      ws.on("close", () => {
        stdout.end();
        stderr.end();
        const s = status as typeof status;
        const code = s?.status === "Success" ? 0 : Number(s?.details?.causes?.find((c) => c.reason === "ExitCode")?.message ?? NaN);
        const exitCode = Number.isFinite(code) ? code : null;
        resolve({ exitCode, timedOut: seconds > 0 && exitCode === 137 && Date.now() - started >= seconds * 1000 });
      });
    });
    return {
      stdout, stderr, exited,
      write: (data) => send(concat(0, data)),
      end: () => {
        ended = true;
        if (ws.readyState === ws.OPEN && v5) ws.send(Uint8Array.of(255, 0));
      },
      kill: () => {
        // The command runs on in the pod when the stream closes: find it by its marker and kill it.
        const killer = this.#kube.exec(this.#namespace, sandboxPodName(id), {
          container: CONTAINER,
          argv: ["sh", "-c", `for p in /proc/[0-9]*; do grep -qsxz "AGENTCLI_COMMAND_ID=${marker}" "$p/environ" && kill -9 "\${p#/proc/}"; done; true`],
        });
        killer.on("open", () => killer.protocol === "v5.channel.k8s.io" && killer.send(Uint8Array.of(255, 0)));
        killer.on("error", () => {});
        killer.on("close", () => ws.close());
      },
    };
  }

  async stop(id: string): Promise<void> {
    const r = await this.#kube.request("DELETE", `/api/v1/namespaces/${this.#namespace}/pods/${sandboxPodName(id)}`);
    if (r.status >= 300 && r.status !== 404) throw new Error(`Cannot stop the sandbox: deleting its pod answered ${r.status}`);
  }

  async remove(id: string): Promise<void> {
    const name = sandboxPodName(id);
    for (const path of [
      `/api/v1/namespaces/${this.#namespace}/pods/${name}`,
      `/apis/networking.k8s.io/v1/namespaces/${this.#namespace}/networkpolicies/${name}`,
      `/api/v1/namespaces/${this.#namespace}/persistentvolumeclaims/${name}`,
    ]) {
      const r = await this.#kube.request("DELETE", path);
      if (r.status >= 300 && r.status !== 404) throw new Error(`Cannot delete the sandbox: DELETE ${path} answered ${r.status}`);
    }
  }

  async close(): Promise<void> {}
}

function concat(channel: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(data.byteLength + 1);
  out[0] = channel;
  out.set(data, 1);
  return out;
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
