/**
 * The local listener's router during a canary (plugins/compute/local-proxy.ts), with two stand-in
 * revisions (HTTP servers that name themselves and make threads) and a shared store of canary
 * threads: two routers on one store (control-plane replicas, or a router started again) send
 * each thread to the revision the other placed it on; a thread whose placement cannot be
 * recorded is not handed out (502), and a thread whose placement cannot be read is not routed
 * by guess (503).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { CanaryThreads } from "../../core/kernel/index.ts";
import { RevisionProxy } from "../../plugins/compute/local-proxy.ts";

const servers: Server[] = [];
const proxies: RevisionProxy[] = [];
let stable = "";
let canary = "";

/** A revision: `POST /threads` makes a thread; any other request answers the revision's name. */
async function revision(name: string): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    const body = req.method === "POST" && req.url === "/threads"
      ? { thread_id: randomUUID(), served_by: name }
      : { served_by: name };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  servers.push(server);
  return `127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** A store of canary threads in memory; `fail` makes its calls throw. */
function memoryStore() {
  const rows = new Map<string, string>();
  const s = {
    fail: false,
    rows,
    assign: async (a: { deploymentId: string; revisionId: string; threadId: string }) => {
      if (s.fail) throw new Error("the store is down");
      rows.set(`${a.deploymentId}/${a.threadId}`, a.revisionId);
    },
    revisionOf: async (q: { deploymentId: string; threadId: string }) => {
      if (s.fail) throw new Error("the store is down");
      return rows.get(`${q.deploymentId}/${q.threadId}`) ?? null;
    },
    count: async (deploymentId: string) => [...rows.keys()].filter((k) => k.startsWith(`${deploymentId}/`)).length,
  };
  return s satisfies CanaryThreads & { fail: boolean };
}

async function router(threads: CanaryThreads, percent: number): Promise<string> {
  const proxy = new RevisionProxy({ maxConnectionsPerClient: 0 });
  const port = await proxy.listen(0, "127.0.0.1");
  proxy.switchTo(stable);
  proxy.startCanary(canary, {
    percent,
    record: { threads, deploymentId: "d1", revisionId: "rev-canary" },
    placed: await threads.count("d1"),
  });
  proxies.push(proxy);
  return `http://127.0.0.1:${port}`;
}

async function post(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/threads`, { method: "POST", body: "{}" });
  return { status: res.status, body: await res.json() };
}

async function servedBy(url: string, threadId: string): Promise<{ status: number; by: string }> {
  const res = await fetch(`${url}/threads/${threadId}/runs/wait`, { method: "POST", body: "{}" });
  const body = await res.json();
  return { status: res.status, by: body.served_by ?? body.detail };
}

before(async () => {
  stable = await revision("stable");
  canary = await revision("canary");
});

after(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  for (const s of servers) s.close();
});

test("two routers on one store send each thread to the revision either placed it on", async () => {
  const store = memoryStore();
  const a = await router(store, 50);
  const b = await router(store, 50);
  const made: Array<{ id: string; by: string }> = [];
  for (let i = 0; i < 20; i++) {
    const { status, body } = await post(i % 2 ? a : b);
    assert.equal(status, 200);
    made.push({ id: body.thread_id, by: body.served_by });
  }
  assert.equal(made.filter((t) => t.by === "canary").length, 10, "each router places an exact half");
  assert.equal(store.rows.size, 10, "every canary thread is in the store");
  for (const t of made) {
    for (const url of [a, b]) assert.deepEqual(await servedBy(url, t.id), { status: 200, by: t.by });
  }
  // A router started again learns the share it had from the store: the next thread goes to the stable revision.
  const c = await router(store, 50);
  assert.equal((await post(c)).body.served_by, "stable");
  assert.equal((await post(c)).body.served_by, "canary");
});

test("a canary thread that cannot be recorded is not handed out; one that cannot be looked up is not guessed", async () => {
  const store = memoryStore();
  const url = await router(store, 100);
  const known = (await post(url)).body.thread_id;
  store.fail = true;
  const refused = await post(url);
  assert.equal(refused.status, 502);
  assert.match(refused.body.detail, /could not be recorded: the control plane's database did not answer/);
  // The router remembers what it placed itself; a thread it never saw needs the store.
  assert.deepEqual(await servedBy(url, known), { status: 200, by: "canary" });
  const unknown = await servedBy(url, randomUUID());
  assert.equal(unknown.status, 503);
  assert.match(
    unknown.by,
    /Cannot tell which revision serves this thread: the control plane's database did not answer/,
  );
  store.fail = false;
  assert.deepEqual(await servedBy(url, randomUUID()), { status: 200, by: "stable" });
});
