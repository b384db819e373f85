/**
 * A stand-in Kubernetes API for sandbox pods: serves API discovery, stores the objects it is sent (pods,
 * claims, network policies; a pod is Running at once), and serves `pods/{name}/exec` over
 * a WebSocket with the channel protocol v5, running the command (once its stdin is closed)
 * in a sandbox of the local runtime (bubblewrap) per claim, so files outlive the pod as on a
 * cluster. Output comes when the command ends, stderr within stdout.
 */
import { createServer, type Server } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocketServer } from "ws";
import { LocalBoxRuntime } from "../../core/platform/sandboxes/local.ts";
import { collect, shellQuote } from "../../core/platform/sandboxes/runtime.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { discoveryDocument } from "./_kube-discovery.ts";

export interface KubeStandIn {
  url: string;
  kubeconfig: string;
  objects: Map<string, any>;
  /** Exec requests seen: the command and the negotiated protocol. */
  execs: Array<{ argv: string[]; protocol: string }>;
  close(): Promise<void>;
}

const TOKEN = "sandbox-kube-token";

export async function startKubeStandIn(): Promise<KubeStandIn> {
  const objects = new Map<string, any>();
  const execs: KubeStandIn["execs"] = [];
  const dir = await mkdtemp(join(tmpdir(), "agentcli-kube-standin-"));
  const boxes = new LocalBoxRuntime({
    driver: await loadPlugins(builtinPlugins),
    dataDir: dir,
    env: { AGENTCLI_SANDBOX_OUTPUT_KB: "65536" },
  });
  /** The local sandbox of each claim (by sandbox id). */
  const refs = new Map<string, string>();
  const send = (res: import("node:http").ServerResponse, status: number, obj: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(obj));
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        return send(res, 401, { kind: "Status", message: "Unauthorized" });
      }
      const path = req.url!.split("?")[0]!;
      const discovery = req.method === "GET" ? discoveryDocument(path) : null;
      if (discovery) return send(res, 200, discovery);
      if (req.method === "POST") {
        const o = JSON.parse(body);
        const key = `${path}/${o.metadata.name}`;
        if (objects.has(key)) {
          return send(res, 409, {
            kind: "Status",
            reason: "AlreadyExists",
            message: `${o.metadata.name} already exists`,
          });
        }
        const id = o.metadata.labels["agentcli.dev/sandbox-id"];
        if (o.kind === "PersistentVolumeClaim") {
          refs.set(id, await boxes.create({ id, tenantId: "t", image: o.spec.image }));
        }
        objects.set(key, o);
        return send(res, 201, o);
      }
      const existing = objects.get(path);
      if (!existing) return send(res, 404, { kind: "Status", reason: "NotFound", message: `${path} not found` });
      if (req.method === "GET") {
        return send(res, 200, { ...existing, status: existing.kind === "Pod" ? { phase: "Running" } : {} });
      }
      if (req.method === "DELETE") {
        objects.delete(path);
        const id = existing.metadata.labels["agentcli.dev/sandbox-id"];
        if (existing.kind === "PersistentVolumeClaim") await boxes.remove(refs.get(id)!);
        return send(res, 200, { kind: "Status", status: "Success" });
      }
      send(res, 405, { message: "method" });
    });
  });
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has("v5.channel.k8s.io") ? "v5.channel.k8s.io" : false),
  });
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url!, "http://x");
    const pod = objects.get(url.pathname.replace(/\/exec$/, ""));
    if (req.headers.authorization !== `Bearer ${TOKEN}` || !pod) {
      socket.end(`HTTP/1.1 ${pod ? 401 : 404} No\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const argv = url.searchParams.getAll("command");
      execs.push({ argv, protocol: ws.protocol });
      const ref = refs.get(pod.metadata.labels["agentcli.dev/sandbox-id"])!;
      const frame = (channel: number, data: Uint8Array | string) =>
        ws.readyState === ws.OPEN && ws.send(Buffer.concat([Buffer.of(channel), Buffer.from(data)]));
      const stdin: Buffer[] = [];
      ws.on("message", (data: Buffer) => {
        if (data[0] === 0) stdin.push(data.subarray(1));
        else if (data[0] === 255 && data[1] === 0) {
          void run().catch((err) => frame(3, JSON.stringify({ status: "Failure", message: String(err) })));
        }
      });
      const run = async () => {
        let command = argv.map(shellQuote).join(" ");
        if (stdin.length) {
          const file = `/workspace/.stdin-${Math.random().toString(36).slice(2)}`;
          await boxes.upload(ref, file, Buffer.concat(stdin));
          command = `${command} < ${file}; code=$?; rm -f ${file}; exit $code`;
        }
        // The runtime returns output as text: base64 carries binary output through it.
        const r = await collect(
          boxes.run(ref, { command: `set -o pipefail; ( ${command} ) | base64 -w0`, timeoutMs: 120_000 }),
        );
        const out = Buffer.from(new TextDecoder().decode(r.stdout), "base64");
        if (out.byteLength) frame(1, out);
        frame(
          3,
          JSON.stringify(
            r.exitCode === 0 ? { metadata: {}, status: "Success" } : {
              metadata: {},
              status: "Failure",
              reason: "NonZeroExitCode",
              details: { causes: [{ reason: "ExitCode", message: String(r.exitCode ?? 137) }] },
            },
          ),
        );
        ws.close(1000);
      };
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return {
    url,
    objects,
    execs,
    kubeconfig:
      `apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: "${url}"}}]\nusers: [{name: u, user: {token: ${TOKEN}}}]\n`,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
      await boxes.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
