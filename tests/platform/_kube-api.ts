/**
 * A local stand-in for a Kubernetes API server (its wire protocol, as `@kubernetes/client-node`
 * speaks it): discovery, create, merge-patch, read (a Deployment reads as rolled out at once) and
 * delete of any object, every call checked for the kubeconfig's token; and the service proxy
 * (`/api/v1/namespaces/{ns}/services/{name}:{port}/proxy/...`), which forwards, streamed, to
 * the address a test gives a Service (the workloads do not run here: a test runs a real server
 * for one and routes its Service to it). `onCreate`/`onPatch`/`onDelete` let a test act as the cluster.
 */
import { createServer, request, type Server } from "node:http";
import { discoveryDocument } from "./_kube-discovery.ts";

export interface FakeKube {
  server: Server;
  url: string;
  /** Objects by their API path. */
  objects: Map<string, any>;
  /** `METHOD url content-type` of every call. */
  requests: string[];
  /** `namespace/service:port` -> the `http://host:port` its service proxy forwards to. */
  services: Map<string, string>;
  close(): Promise<void>;
}

export interface FakeKubeHooks {
  /** Called before the API answers a create (a test may start what the object runs). */
  onCreate?: (path: string, object: any) => Promise<void>;
  onDelete?: (path: string, object: any) => Promise<void>;
  /** Called after a patch with the object before and after it, before the API answers. */
  onPatch?: (path: string, before: any, after: any) => Promise<void>;
}

const TOKEN = "kube-token";
const PROXY = /^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/]+)\/proxy(\/.*)?$/;

export function fakeKubeApi(hooks: FakeKubeHooks = {}): Promise<FakeKube> {
  const objects = new Map<string, any>();
  const requests: string[] = [];
  const services = new Map<string, string>();
  const server = createServer((req, res) => {
    const send = (status: number, obj: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(obj));
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      req.resume();
      return send(401, { kind: "Status", message: "Unauthorized" });
    }
    const [path = "/", query] = req.url!.split(/\?(.*)/s);
    const proxied = PROXY.exec(path);
    if (proxied) {
      requests.push(`${req.method} ${req.url} proxy`);
      const target = services.get(`${proxied[1]}/${decodeURIComponent(proxied[2]!)}`);
      if (!target) {
        req.resume();
        return send(503, { kind: "Status", reason: "ServiceUnavailable", message: "no endpoints available" });
      }
      const headers = { ...req.headers };
      delete headers.authorization;
      delete headers.host;
      const up = request(
        `${target}${proxied[3] ?? "/"}${query !== undefined ? `?${query}` : ""}`,
        { method: req.method, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      up.on("error", (err) => (res.headersSent ? res.destroy() : send(502, { message: err.message })));
      return void req.pipe(up);
    }
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => void answer(body));
    const answer = async (body: string) => {
      requests.push(`${req.method} ${req.url} ${req.headers["content-type"] ?? ""}`);
      const discovery = req.method === "GET" ? discoveryDocument(path) : null;
      if (discovery) return send(200, discovery);
      if (req.method === "POST") {
        const o = JSON.parse(body);
        const key = `${path}/${o.metadata.name}`;
        if (objects.has(key)) {
          return send(409, { kind: "Status", reason: "AlreadyExists", message: `${o.metadata.name} already exists` });
        }
        objects.set(key, { ...o, metadata: { ...o.metadata, generation: 1 } });
        await hooks.onCreate?.(key, objects.get(key));
        return send(201, objects.get(key));
      }
      const existing = objects.get(path);
      if (!existing) return send(404, { kind: "Status", reason: "NotFound", message: "not found" });
      if (req.method === "PATCH") {
        if (req.headers["content-type"] !== "application/merge-patch+json") {
          return send(415, { message: "unsupported patch type" });
        }
        const o = JSON.parse(body);
        objects.set(path, {
          ...existing,
          ...o,
          metadata: { ...existing.metadata, ...o.metadata, generation: existing.metadata.generation + 1 },
        });
        await hooks.onPatch?.(path, existing, objects.get(path));
        return send(200, objects.get(path));
      }
      if (req.method === "GET") {
        const replicas = existing.spec?.replicas ?? 1;
        return send(200, {
          ...existing,
          status: {
            observedGeneration: existing.metadata.generation,
            updatedReplicas: replicas,
            availableReplicas: replicas,
          },
        });
      }
      if (req.method === "DELETE") {
        objects.delete(path);
        await hooks.onDelete?.(path, existing);
        return send(200, { kind: "Status", status: "Success" });
      }
      send(405, { message: "method" });
    };
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        server,
        url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
        objects,
        requests,
        services,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }))
  );
}

/** A kubeconfig whose current context reaches `server` with the stand-in's token. */
export const kubeconfig = (server: string, token = TOKEN) =>
  `apiVersion: v1
kind: Config
current-context: test
contexts: [{ name: test, context: { cluster: c1, user: u1 } }]
clusters: [{ name: c1, cluster: { server: "${server}" } }]
users: [{ name: u1, user: { token: ${token} } }]
`;
