/**
 * The control plane's Kubernetes access, on `@kubernetes/client-node`: its `KubeConfig` reads
 * the listener's kubeconfig (current context: server, CA, token, client certificate, exec and
 * auth-provider plugins), its `KubernetesObjectApi` creates, patches, reads and deletes any
 * object (finding each kind's resource by API discovery), and its `Exec` runs commands in pods
 * over the WebSocket channel protocol. On top: apply (create, or merge-patch what exists),
 * waiting for a rollout, and errors that say what failed and what the API answered.
 *
 * @example
 * const kube = KubeClient.fromKubeconfig(text);
 * await kube.apply(objects);
 */
import type { Readable, Writable } from "node:stream";
import {
  ApiException,
  Exec,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  type V1Status,
} from "@kubernetes/client-node";
// Not re-exported by the package's index; needed to give the handler our own streams.
import { WebSocketHandler } from "@kubernetes/client-node/dist/web-socket-handler.js";
import {
  agentcliError,
  CREATE_ONLY,
  type K8sObject,
  type KubeApi,
  KubeApiRefused,
  KubeApiUnreachable,
  KubeconfigNoServer,
  KubeconfigUnreadable,
  KubeDeploymentGone,
  KubeDeploymentUnavailable,
  KubeExecRefused,
  KubeExecUnreachable,
} from "../../kernel/index.ts";
import { openServiceProxy } from "./k8s-service-proxy.ts";

/** An object's identity: enough to read or delete it. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { namespace: string; name: string };
}

/** A WebSocket of a running exec, as the client library opens it. */
export type ExecSocket = Awaited<ReturnType<Exec["exec"]>>;

export class KubeClient implements KubeApi {
  readonly #kc: KubeConfig;
  readonly #api: KubernetesObjectApi;

  private constructor(kc: KubeConfig) {
    this.#kc = kc;
    this.#api = KubernetesObjectApi.makeApiClient(kc);
  }

  /** Reads the current context of a kubeconfig (YAML or JSON). */
  static fromKubeconfig(text: string): KubeClient {
    const kc = new KubeConfig();
    try {
      kc.loadFromString(text);
    } catch (err) {
      throw agentcliError(KubeconfigUnreadable, { reason: err instanceof Error ? err.message : String(err) });
    }
    if (!kc.getCurrentCluster()?.server) throw agentcliError(KubeconfigNoServer);
    // The library refuses an http:// server unless TLS checks are off; there is no TLS to check
    // there, and a plain-HTTP API server (a local one, a proxy) is what such a kubeconfig asks for.
    kc.clusters = kc.clusters.map((c) => (c.server.startsWith("http://") ? { ...c, skipTLSVerify: true } : c));
    return new KubeClient(kc);
  }

  /** Creates an object; "exists" when the API answers 409 (it is there already). */
  async create(o: K8sObject): Promise<"created" | "exists"> {
    const r = await this.#call(`create ${o.kind} "${o.metadata.name}"`, () => this.#api.create(o as KubernetesObject), [
      409,
    ]);
    return r === 409 ? "exists" : "created";
  }

  /** Reads an object; null when it does not exist. */
  async read<T extends KubernetesObject>(ref: ObjectRef): Promise<T | null> {
    const r = await this.#call(`read ${ref.kind} "${ref.metadata.name}"`, () => this.#api.read(ref), [404]);
    return r === 404 ? null : (r as T);
  }

  /** Deletes an object; false when it did not exist. */
  async delete(ref: ObjectRef): Promise<boolean> {
    return (await this.#call(`delete ${ref.kind} "${ref.metadata.name}"`, () => this.#api.delete(ref), [404])) !== 404;
  }

  /** Creates or updates every object, in order; returns what happened to each. */
  async apply(
    objects: K8sObject[],
    log: (m: string) => void = () => {},
  ): Promise<Array<{ kind: string; name: string; action: "created" | "updated" | "kept" }>> {
    const out: Array<{ kind: string; name: string; action: "created" | "updated" | "kept" }> = [];
    for (const o of objects) {
      let action: "created" | "updated" | "kept" = "created";
      if ((await this.create(o)) === "exists") {
        if (o.metadata.annotations?.[CREATE_ONLY]) action = "kept";
        else {
          await this.#call(
            `update ${o.kind} "${o.metadata.name}"`,
            () =>
              this.#api.patch(
                o as KubernetesObject,
                undefined,
                undefined,
                undefined,
                undefined,
                PatchStrategy.MergePatch,
              ),
          );
          action = "updated";
        }
      }
      log(`${o.kind} ${o.metadata.namespace}/${o.metadata.name} ${action}`);
      out.push({ kind: o.kind, name: o.metadata.name, action });
    }
    return out;
  }

  /** Resolves once a Deployment runs its desired replicas of the newest template; polls `attempts` times. */
  async waitForRollout(
    namespace: string,
    name: string,
    opts: { attempts?: number; intervalMs?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    for (let i = 0; i < (opts.attempts ?? 600); i++) {
      // The rollout writes its own status when interrupted; this message is not shown.
      if (opts.signal?.aborted) throw new Error("the rollout was interrupted");
      const d = await this.read<
        KubernetesObject & {
          spec?: { replicas?: number };
          status?: { observedGeneration?: number; updatedReplicas?: number; availableReplicas?: number };
        }
      >(
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { namespace, name } },
      );
      if (!d) throw agentcliError(KubeDeploymentGone, { name });
      const want = d.spec?.replicas ?? 1;
      const s = d.status ?? {};
      if (
        (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) && (s.updatedReplicas ?? 0) >= want &&
        (s.availableReplicas ?? 0) >= want
      ) return;
      await new Promise((res) => setTimeout(res, opts.intervalMs ?? 1000));
    }
    throw agentcliError(KubeDeploymentUnavailable, { name });
  }

  /**
   * Runs `argv` in a pod's container over `pods/{pod}/exec` (channel protocol v5, which can
   * close stdin, down to v1): `stdin` is sent as it comes and its end closes the command's
   * input; output goes to `stdout`/`stderr`; `onStatus` gets the final status. Resolves with
   * the open socket (it closes when the command ends).
   */
  async exec(namespace: string, pod: string, opts: {
    container: string;
    argv: string[];
    stdin: Readable;
    stdout: Writable;
    stderr: Writable;
    onStatus: (s: V1Status) => void;
  }): Promise<ExecSocket> {
    // Our own streams also for the handler's stream-close frames (its default is the process's stdio).
    const handler = new WebSocketHandler(this.#kc, undefined, {
      stdin: opts.stdin as NodeJS.ReadStream,
      stdout: opts.stdout as NodeJS.WriteStream,
      stderr: opts.stderr as NodeJS.WriteStream,
    });
    try {
      return await new Exec(this.#kc, handler).exec(
        namespace,
        pod,
        opts.container,
        opts.argv,
        opts.stdout,
        opts.stderr,
        opts.stdin,
        false,
        opts.onStatus,
      );
    } catch (err) {
      const message = (err as { message?: string })?.message ?? String(err);
      const status = /Unexpected server response: (\d+)/.exec(message)?.[1];
      throw status
        ? agentcliError(KubeExecRefused, { status })
        : agentcliError(KubeExecUnreachable, { server: this.#server, reason: message });
    }
  }

  /** A loopback address forwarding to a Service through the API server's service proxy (./k8s-service-proxy.ts). */
  serviceProxy(o: { namespace: string; service: string; port: string | number }) {
    return openServiceProxy(this.#kc, o);
  }

  /** Deletes the objects (missing ones are fine). */
  async remove(objects: K8sObject[]): Promise<void> {
    for (const o of [...objects].reverse()) await this.delete(o);
  }

  get #server(): string {
    return this.#kc.getCurrentCluster()?.server ?? "(no server)";
  }

  /** Runs one API call; an answer in `allowed` is returned as its status, other failures are clear errors. */
  async #call<T>(action: string, fn: () => Promise<T>, allowed: number[] = []): Promise<T | number> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ApiException) {
        if (allowed.includes(err.code)) return err.code;
        const body = err.body as { message?: string } | string | undefined;
        const message = typeof body === "object" && body?.message ? `: ${body.message}` : "";
        throw agentcliError(KubeApiRefused, { action, status: err.code, detail: message });
      }
      const reason = err instanceof Error ? err.message : String(err);
      throw agentcliError(KubeApiUnreachable, { action, server: this.#server, reason });
    }
  }
}
