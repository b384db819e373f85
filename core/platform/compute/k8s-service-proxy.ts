/**
 * A local address for a Service inside a cluster: a loopback HTTP server that forwards every
 * request, streamed both ways, through the Kubernetes API server's service proxy
 * (`/api/v1/namespaces/{ns}/services/{name}:{port}/proxy/...`) with the kubeconfig's
 * credentials (token, client certificate, exec plugins: `KubeConfig.applyToHTTPSOptions`). The
 * control plane checks a revision's server this way (issue 37's gates) wherever it runs,
 * without reaching the pods' network.
 *
 * @example
 * const p = await openServiceProxy(kc, { namespace: "agents", service: "agent-candidate", port: "http" });
 * await fetch(`${p.url}/ok`);
 * await p.close();
 */
import { createServer, type IncomingHttpHeaders, request as httpRequest } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

/** Request headers the API server must not get from the caller (hop by hop, or its own). */
const DROPPED = new Set(["host", "connection", "keep-alive", "authorization", "proxy-authorization", "upgrade"]);

export async function openServiceProxy(
  kc: KubeConfig,
  o: { namespace: string; service: string; port: string | number },
): Promise<{ url: string; close(): Promise<void> }> {
  const api = new URL(kc.getCurrentCluster()!.server);
  const base = `${api.pathname.replace(/\/$/, "")}/api/v1/namespaces/${encodeURIComponent(o.namespace)}/services/${
    encodeURIComponent(o.service)
  }:${encodeURIComponent(String(o.port))}/proxy`;
  const send = api.protocol === "https:" ? httpsRequest : httpRequest;
  const server = createServer(async (req, res) => {
    const options: RequestOptions = {};
    try {
      await kc.applyToHTTPSOptions(options);
    } catch (err) {
      return void res.writeHead(502, { "content-type": "application/json" }).end(
        JSON.stringify({ detail: `no credentials for the cluster: ${err instanceof Error ? err.message : err}` }),
      );
    }
    // The library's agent speaks TLS; a plain-HTTP API server gets Node's own.
    if (api.protocol !== "https:") delete options.agent;
    const headers: IncomingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!DROPPED.has(k)) headers[k] = v;
    const up = send(
      {
        ...options,
        protocol: api.protocol,
        hostname: api.hostname,
        port: api.port || undefined,
        method: req.method,
        path: `${base}${req.url ?? "/"}`,
        headers: { ...headers, ...(options.headers ?? {}) },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on("error", (err) => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" }).end(
          JSON.stringify({ detail: `the cluster's API server did not answer: ${err.message}` }),
        );
      } else res.destroy();
    });
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
