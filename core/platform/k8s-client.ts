/**
 * A small Kubernetes API client for applying manifests: reads a kubeconfig (current
 * context: server, CA, bearer token or client certificate), creates each object with a POST
 * to its collection and, when it exists (409), updates it with a merge PATCH; waits for
 * Deployments to finish rolling out; deletes on teardown.
 *
 * @example
 * const kube = KubeClient.fromKubeconfig(text);
 * await kube.apply(objects);
 */
import { Buffer } from "node:buffer";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import WebSocket from "ws";
import { parse as parseYaml } from "yaml";
import { CREATE_ONLY, type K8sObject } from "./k8s-manifests.ts";

interface Connection {
  server: string;
  ca?: Buffer;
  token?: string;
  cert?: Buffer;
  key?: Buffer;
  insecure?: boolean;
}

const PLURALS: Record<string, string> = {
  Secret: "secrets", Service: "services", ConfigMap: "configmaps", Deployment: "deployments",
  StatefulSet: "statefulsets", HorizontalPodAutoscaler: "horizontalpodautoscalers",
  Pod: "pods", PersistentVolumeClaim: "persistentvolumeclaims", NetworkPolicy: "networkpolicies",
};

/** The REST path of an object (`name` omitted: its collection). */
export function objectPath(o: Pick<K8sObject, "apiVersion" | "kind"> & { metadata: { namespace: string; name?: string } }): string {
  const plural = PLURALS[o.kind];
  if (!plural) throw new Error(`cannot apply kind "${o.kind}"`);
  const group = o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  return `${group}/namespaces/${o.metadata.namespace}/${plural}${o.metadata.name ? `/${o.metadata.name}` : ""}`;
}

export class KubeClient {
  private readonly conn: Connection;

  constructor(conn: Connection) {
    this.conn = conn;
  }

  /** Reads the current context of a kubeconfig (YAML or JSON). */
  static fromKubeconfig(text: string): KubeClient {
    const cfg = parseYaml(text) as {
      "current-context"?: string;
      contexts?: Array<{ name: string; context: { cluster: string; user: string } }>;
      clusters?: Array<{ name: string; cluster: { server: string; "certificate-authority-data"?: string; "insecure-skip-tls-verify"?: boolean } }>;
      users?: Array<{ name: string; user: { token?: string; "client-certificate-data"?: string; "client-key-data"?: string } }>;
    };
    const ctx = cfg.contexts?.find((c) => c.name === cfg["current-context"]) ?? cfg.contexts?.[0];
    const cluster = cfg.clusters?.find((c) => c.name === ctx?.context.cluster)?.cluster ?? cfg.clusters?.[0]?.cluster;
    const user = cfg.users?.find((u) => u.name === ctx?.context.user)?.user ?? cfg.users?.[0]?.user ?? {};
    if (!cluster?.server) throw new Error("the kubeconfig names no cluster server");
    const b64 = (s?: string) => (s ? Buffer.from(s, "base64") : undefined);
    return new KubeClient({
      server: cluster.server.replace(/\/+$/, ""), ca: b64(cluster["certificate-authority-data"]), insecure: cluster["insecure-skip-tls-verify"],
      token: user.token, cert: b64(user["client-certificate-data"]), key: b64(user["client-key-data"]),
    });
  }

  /** One API request; resolves with the status and parsed body. */
  request(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<{ status: number; body: any }> {
    const url = new URL(this.conn.server + path);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = send(url, {
        method,
        headers: {
          accept: "application/json",
          ...(payload ? { "content-type": contentType, "content-length": Buffer.byteLength(payload) } : {}),
          ...(this.conn.token ? { authorization: `Bearer ${this.conn.token}` } : {}),
        },
        ca: this.conn.ca, cert: this.conn.cert, key: this.conn.key, rejectUnauthorized: !this.conn.insecure,
      }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () => {
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {}
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      });
      req.on("error", (err) => reject(new Error(`cannot reach the Kubernetes API at ${this.conn.server}: ${err.message}`)));
      req.end(payload);
    });
  }

  /** Creates or updates every object, in order; returns what happened to each. */
  async apply(objects: K8sObject[], log: (m: string) => void = () => {}): Promise<Array<{ kind: string; name: string; action: "created" | "updated" | "kept" }>> {
    const out: Array<{ kind: string; name: string; action: "created" | "updated" | "kept" }> = [];
    for (const o of objects) {
      const created = await this.request("POST", objectPath({ ...o, metadata: { namespace: o.metadata.namespace } }), o);
      let action: "created" | "updated" | "kept" = "created";
      if (created.status === 409) {
        if (o.metadata.annotations?.[CREATE_ONLY]) action = "kept";
        else {
          const patched = await this.request("PATCH", objectPath(o), o, "application/merge-patch+json");
          if (patched.status >= 300) throw apiError(`update ${o.kind} "${o.metadata.name}"`, patched);
          action = "updated";
        }
      } else if (created.status >= 300) throw apiError(`create ${o.kind} "${o.metadata.name}"`, created);
      log(`${o.kind} ${o.metadata.namespace}/${o.metadata.name} ${action}`);
      out.push({ kind: o.kind, name: o.metadata.name, action });
    }
    return out;
  }

  /** Resolves once a Deployment runs its desired replicas of the newest template; polls `attempts` times. */
  async waitForRollout(namespace: string, name: string, opts: { attempts?: number; intervalMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    for (let i = 0; i < (opts.attempts ?? 600); i++) {
      if (opts.signal?.aborted) throw new Error("the rollout was interrupted");
      const r = await this.request("GET", objectPath({ apiVersion: "apps/v1", kind: "Deployment", metadata: { namespace, name } }));
      if (r.status >= 300) throw apiError(`read Deployment "${name}"`, r);
      const want = r.body?.spec?.replicas ?? 1;
      const s = r.body?.status ?? {};
      if ((s.observedGeneration ?? 0) >= (r.body?.metadata?.generation ?? 1) && (s.updatedReplicas ?? 0) >= want && (s.availableReplicas ?? 0) >= want) return;
      await new Promise((res) => setTimeout(res, opts.intervalMs ?? 1000));
    }
    throw new Error(`Deployment "${name}" did not become available`);
  }

  /**
   * Opens `pods/{pod}/exec` over a WebSocket with the channel protocol (`v5.channel.k8s.io`,
   * which can close stdin, else `v4`): frames are one channel byte (0 stdin, 1 stdout,
   * 2 stderr, 3 the final status, 255 close) and the data.
   */
  exec(namespace: string, pod: string, opts: { container: string; argv: string[] }): WebSocket {
    const url = new URL(`${this.conn.server}/api/v1/namespaces/${namespace}/pods/${pod}/exec`);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    for (const arg of opts.argv) url.searchParams.append("command", arg);
    for (const [k, v] of [["container", opts.container], ["stdin", "true"], ["stdout", "true"], ["stderr", "true"]]) url.searchParams.set(k!, v!);
    return new WebSocket(url, ["v5.channel.k8s.io", "v4.channel.k8s.io"], {
      headers: this.conn.token ? { authorization: `Bearer ${this.conn.token}` } : {},
      ca: this.conn.ca, cert: this.conn.cert, key: this.conn.key, rejectUnauthorized: !this.conn.insecure,
    });
  }

  /** Deletes the objects (missing ones are fine). */
  async remove(objects: K8sObject[]): Promise<void> {
    for (const o of [...objects].reverse()) {
      const r = await this.request("DELETE", objectPath(o));
      if (r.status >= 300 && r.status !== 404) throw apiError(`delete ${o.kind} "${o.metadata.name}"`, r);
    }
  }
}

function apiError(action: string, r: { status: number; body: any }): Error {
  return new Error(`cannot ${action}: the Kubernetes API answered ${r.status}${r.body?.message ? `: ${r.body.message}` : ""}`);
}
