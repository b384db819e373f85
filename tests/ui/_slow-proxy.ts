/**
 * A pass-through in front of the model server that paces its SSE events (`delayMs` apart), so
 * a browser test can watch a reply arrive piece by piece. Same wire protocol in and out.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface SlowProxy {
  url: string;
  delayMs: number;
  close(): Promise<void>;
}

function body(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export async function startSlowProxy(target: string, delayMs = 0): Promise<SlowProxy> {
  const state = { delayMs };
  const server = createServer(async (req, res) => {
    try {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v;
      const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body: req.method === "GET" ? undefined : new Uint8Array(await body(req)) });
      const type = upstream.headers.get("content-type") ?? "";
      res.writeHead(upstream.status, { "content-type": type, "cache-control": "no-cache" });
      if (!type.includes("text/event-stream") || !upstream.body) {
        res.end(Buffer.from(await upstream.arrayBuffer()));
        return;
      }
      let buffered = "";
      const decoder = new TextDecoder();
      for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf("\n\n")) >= 0) {
          const event = buffered.slice(0, end + 2);
          buffered = buffered.slice(end + 2);
          if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
          res.write(event);
        }
      }
      if (buffered) res.write(buffered);
      res.end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `slow-proxy: ${(err as Error).message}` } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get delayMs() { return state.delayMs; },
    set delayMs(v: number) { state.delayMs = v; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
