/**
 * A PostgreSQL restart under load, seen from the server: a TCP proxy between the server and
 * PostgreSQL is cut (every connection reset, new ones refused) for a few seconds while runs
 * execute and clients keep calling. Requests during the outage get 503 with Retry-After,
 * never a 500; every acknowledged run ends `success` once the database is back (none lost,
 * none wrongly failed), and the server works normally afterwards.
 */
import assert from "node:assert/strict";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { after, before, test } from "node:test";
import { pgSchema, startTestServer, type TestServer } from "./_harness.ts";

const PG = new URL(process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test");

/** A TCP proxy to PostgreSQL that can be cut (as a restart looks to clients) and restored. */
class CuttableProxy {
  readonly #sockets = new Set<Socket>();
  #down = false;
  server: Server | null = null;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((client) => {
      if (this.#down) return void client.destroy();
      const upstream = createConnection({ host: PG.hostname, port: Number(PG.port || 5432) });
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on("close", () => this.#sockets.delete(s));
        s.on("error", () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as { port: number }).port;
  }

  cut(): void {
    this.#down = true;
    for (const s of this.#sockets) s.destroy();
  }

  restore(): void {
    this.#down = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((r) => this.server?.close(r));
  }
}

const proxy = new CuttableProxy();
let schema: Awaited<ReturnType<typeof pgSchema>>;
let server: TestServer;

before(async () => {
  await proxy.start();
  schema = await pgSchema("agentcli_outage");
  const url = new URL(schema.url);
  url.host = `127.0.0.1:${proxy.port}`;
  // Signals over PostgreSQL LISTEN/NOTIFY (no Redis): the bus must come back too.
  server = await startTestServer({ storage: { url: url.toString() }, workers: 16 });
});

after(async () => {
  await server?.close();
  await proxy.close();
  await schema?.drop();
});

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; retryAfter: string | null; json: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), json: await res.json().catch(() => null) };
}

test(
  "a database outage under load: 503 + Retry-After meanwhile, no run lost or wrongly failed",
  { timeout: 180_000 },
  async () => {
    const acknowledged: Array<{ thread_id: string; run_id: string }> = [];
    const create = async () => {
      const th = await call("POST", "/threads", {});
      if (th.status !== 200) return th;
      const run = await call("POST", `/threads/${th.json.thread_id}/runs`, {
        assistant_id: "slow",
        input: { ms: 1500 },
      });
      if (run.status === 200) acknowledged.push({ thread_id: th.json.thread_id, run_id: run.json.run_id });
      return run;
    };
    for (let i = 0; i < 12; i++) assert.equal((await create()).status, 200);
    await new Promise((r) => setTimeout(r, 300));
    proxy.cut();
    // Calls during the outage: refused with 503 and Retry-After (or served, when they came before the cut).
    const during: Array<{ status: number; retryAfter: string | null; json: any }> = [];
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      during.push(await create());
      during.push(await call("GET", `/threads/${acknowledged[0]!.thread_id}/runs/${acknowledged[0]!.run_id}`));
    }
    proxy.restore();
    assert.ok(during.length > 0);
    for (const r of during) {
      assert.ok(r.status === 200 || r.status === 503, `status ${r.status}: ${JSON.stringify(r.json)}`);
      if (r.status === 503) {
        assert.equal(r.retryAfter, "5");
        assert.equal(r.json.code, "SERVICE_UNREACHABLE");
      }
    }
    assert.ok(during.some((r) => r.status === 503), "the outage was seen");
    // After it: every acknowledged run ends, and ends `success`.
    let lost = 0;
    let failed = 0;
    for (const r of acknowledged) {
      await server.client.runs.join(r.thread_id, r.run_id);
      const run = await server.client.runs.get(r.thread_id, r.run_id).catch(() => null);
      if (!run) lost++;
      else if (run.status !== "success") failed++;
    }
    assert.deepEqual({ lost, failed }, { lost: 0, failed: 0 });
    // The server works normally again (the bus too: a streamed run ends).
    const th = await server.client.threads.create();
    const out = (await server.client.runs.wait(th.thread_id, "slow", { input: { ms: 1 } })) as { steps: number };
    assert.equal(out.steps, 1);
  },
);
