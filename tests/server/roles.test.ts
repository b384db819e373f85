/**
 * Replica roles on one PostgreSQL schema: an `api` replica runs nothing (a run created on it
 * executes on a `worker` replica), a `worker` replica answers only /ok and /info, and /info
 * reports the role. A stopping replica hands back the runs it cannot finish in its grace
 * time: another replica takes them over at once and resumes them.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { defaultWorkers, roleSetting, workersSetting } from "../../core/engine/queue/roles.ts";
import { FIXTURES, pgSchema, startTestServer, type TestServer } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

const graphs = { ...FIXTURES, steps: async () => (await import("../fixtures/graphs/steps.ts")).graph };

let schema: Awaited<ReturnType<typeof pgSchema>>;
let api: TestServer;
let worker: TestServer;

before(async () => {
  schema = await pgSchema("agentcli_roles");
  api = await startTestServer({ storage: { url: schema.url }, graphs, role: "api", runLeaseSeconds: 1 });
  worker = await startTestServer({
    storage: { url: schema.url },
    graphs,
    role: "worker",
    workers: 4,
    runLeaseSeconds: 1,
  });
});

after(async () => {
  await worker?.close();
  await api?.close();
  await schema?.drop();
});

test("roles and workers settings: flags over environment, clear errors, api runs nothing", () => {
  assert.equal(roleSetting(undefined, {}), "all");
  assert.equal(roleSetting(undefined, { AGENTCLI_ROLE: "worker" }), "worker");
  assert.equal(roleSetting("api", { AGENTCLI_ROLE: "worker" }), "api");
  assert.throws(() => roleSetting("queue", {}), /--role "queue" is not a role[\s\S]*/);
  assert.equal(workersSetting(undefined, {}, "all"), defaultWorkers());
  assert.equal(workersSetting(3, { AGENTCLI_WORKERS: "9" }, "worker"), 3);
  assert.equal(workersSetting(undefined, { AGENTCLI_WORKERS: "9" }, "worker"), 9);
  assert.equal(workersSetting(5, {}, "api"), 0);
  assert.throws(() => workersSetting(undefined, { AGENTCLI_WORKERS: "two" }, "all"), /AGENTCLI_WORKERS="two"/);
  assert.equal(defaultWorkers(1), 4);
  assert.equal(defaultWorkers(4), 16);
  assert.equal(defaultWorkers(64), 64);
});

test("/info reports the role; the worker serves only /ok and /info; a run created on the api replica runs on the worker", async () => {
  const info = (await (await fetch(`${api.url}/info`)).json()) as { role: string; workers: number };
  assert.deepEqual([info.role, info.workers], ["api", 0]);
  const winfo = (await (await fetch(`${worker.url}/info`)).json()) as { role: string; workers: number };
  assert.deepEqual([winfo.role, winfo.workers], ["worker", 4]);
  assert.equal((await fetch(`${worker.url}/ok`)).status, 200);
  const refused = await fetch(`${worker.url}/threads`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(refused.status, 404);
  assert.match(((await refused.json()) as { detail: string }).detail, /only runs the queue/);
  const th = await api.client.threads.create();
  const out = (await api.client.runs.wait(th.thread_id, "slow", { input: { ms: 1 } })) as { steps: number };
  assert.equal(out.steps, 1);
});

test("a stopping replica hands back a run it cannot finish in time: another resumes it at once", async () => {
  // Only `extra` runs the queue when the run starts; its lease (60 s) would keep it from
  // anyone else for a minute unless it is handed back.
  await worker.close();
  const extra = await startTestServer({
    storage: { url: schema.url },
    graphs,
    role: "worker",
    workers: 4,
    runLeaseSeconds: 60,
  });
  const th = await api.client.threads.create();
  const run = await api.client.runs.create(th.thread_id, "steps", { input: { ms: 1500 }, streamMode: ["custom"] });
  for await (const e of api.client.runs.joinStream(th.thread_id, run.run_id, { streamMode: ["custom"] })) {
    if (e.event === "custom") break;
  }
  worker = await startTestServer({
    storage: { url: schema.url },
    graphs,
    role: "worker",
    workers: 4,
    runLeaseSeconds: 1,
  });
  await extra.server.close({ graceMs: 50 });
  const { rows } = await sqlOf(api.server.storage).query<{ lease_holder: string; expired: boolean }>(
    "SELECT lease_holder, lease_until < now() AS expired FROM runs WHERE run_id = $1",
    [run.run_id],
  );
  assert.ok(
    rows[0]!.expired || rows[0]!.lease_holder === worker.server.storage.runs.holder,
    `handed back: ${JSON.stringify(rows[0])}`,
  );
  const done = (await api.client.runs.join(th.thread_id, run.run_id)) as { log: string[] };
  assert.deepEqual(done.log, ["first", "second"]);
  const r = await api.client.runs.get(th.thread_id, run.run_id);
  assert.equal(r.status, "success");
  assert.equal(r.metadata?.resumed, true);
  await extra.close();
});
