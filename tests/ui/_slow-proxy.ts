/**
 * A pass-through in front of the model server, so a browser test can watch a reply arrive
 * piece by piece: it paces SSE events (`delayMs` apart), and `hold()` stops one matching
 * reply part-way (after its first `afterEvents` SSE events) until the test releases it, so
 * "while the run is still going" is a state the test waits for, not a race. Same wire
 * protocol in and out.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** One held reply: `reached` resolves once it is stopped; `release()` lets the rest through. */
export interface Gate {
  reached: Promise<void>;
  release(): void;
}

export interface SlowProxy {
  url: string;
  delayMs: number;
  /** Holds the next request whose JSON body passes `when`, after `afterEvents` SSE events (0: before any). */
  hold(when: (body: string) => boolean, opts?: { afterEvents?: number }): Gate;
  close(): Promise<void>;
}

interface PendingGate {
  when: (body: string) => boolean;
  afterEvents: number;
  reach(): void;
  released: Promise<void>;
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
  const gates: PendingGate[] = [];
  const server = createServer(async (req, res) => {
    try {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v;
      }
      const payload = req.method === "GET" ? undefined : await body(req);
      const text = payload?.toString("utf8") ?? "";
      const gateIndex = gates.findIndex((g) => g.when(text));
      const gate = gateIndex >= 0 ? gates.splice(gateIndex, 1)[0]! : null;
      if (gate && gate.afterEvents === 0) {
        gate.reach();
        await gate.released;
      }
      const upstream = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        body: payload ? new Uint8Array(payload) : undefined,
      });
      const type = upstream.headers.get("content-type") ?? "";
      res.writeHead(upstream.status, { "content-type": type, "cache-control": "no-cache" });
      if (!type.includes("text/event-stream") || !upstream.body) {
        res.end(Buffer.from(await upstream.arrayBuffer()));
        return;
      }
      let buffered = "";
      let sent = 0;
      const decoder = new TextDecoder();
      for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf("\n\n")) >= 0) {
          const event = buffered.slice(0, end + 2);
          buffered = buffered.slice(end + 2);
          if (gate && sent === gate.afterEvents) {
            gate.reach();
            await gate.released;
          }
          if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
          res.write(event);
          sent++;
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
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(v: number) {
      state.delayMs = v;
    },
    hold(when, opts = {}) {
      let reach!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((r) => {
        reach = r;
      });
      const released = new Promise<void>((r) => {
        release = r;
      });
      gates.push({ when, afterEvents: opts.afterEvents ?? 0, reach, released });
      return { reached, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
