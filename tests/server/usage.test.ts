/**
 * Usage recorded and readable: a real LangChain agent (./_usage.ts) run through the SDK; every
 * model call's tokens and estimated cost are in the run's record, the thread's totals in its,
 * and `GET /usage` groups them (the subagent's calls count toward the parent run), whether
 * the usage is read from the run's stream (traces off) or by its callback handler (traces
 * kept); who reads whose. Budgets and rate limits: ./usage-budgets.test.ts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { agentGraph, models, PRICES, scriptTurn, serverWith, useModels, useTraceRetention, WAYS } from "./_usage.ts";
import { startTestServer, type TestServer } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

useModels();

for (const way of WAYS) {
  describe(`usage recorded and readable (${way.name})`, () => {
    let t: TestServer;
    before(async () => {
      useTraceRetention(way.traceRetentionSeconds);
      t = await serverWith({});
    });
    after(async () => await t?.close());

    test("a run's model calls (its subagent's too) are in its record, the thread's totals in its, /usage groups them", async () => {
      scriptTurn("zebra", { input: 100, output: 20, cached: 40 });
      const thread = await t.client.threads.create();
      const run = await t.client.runs.create(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: "zebra" }] },
      });
      await t.client.runs.join(thread.thread_id, run.run_id);
      const got = await t.client.runs.get(thread.thread_id, run.run_id) as unknown as {
        status: string;
        usage: Record<string, number | null>;
      };
      assert.equal(got.status, "success");
      assert.equal(got.usage.calls, 3, "two calls of the agent's model and one of the subagent's");
      assert.equal(got.usage.input_tokens, 300);
      assert.equal(got.usage.output_tokens, 60);
      assert.equal(got.usage.total_tokens, 360);
      assert.equal(got.usage.cached_input_tokens, 120);
      // (60 fresh * $1 + 40 cached * $0.5 + 20 out * $2) per million, three times.
      assert.ok(Math.abs(got.usage.cost_usd! - 3 * 120e-6) < 1e-12, `cost ${got.usage.cost_usd}`);
      // No budget applies: the run's calls of its one model are one row, written with its end.
      const stored = await sqlOf(t.server.storage).query<{ calls: number }>(
        "SELECT calls FROM usage_calls WHERE run_id = $1",
        [run.run_id],
      );
      assert.deepEqual(stored.rows.map((r) => Number(r.calls)), [3]);

      scriptTurn("okapi");
      const second = await t.client.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: "okapi" }] },
      });
      assert.ok(second);
      const listed = await t.client.runs.list(thread.thread_id) as unknown as Array<
        { run_id: string; usage: { calls: number } | null }
      >;
      assert.deepEqual(listed.map((r) => r.usage?.calls), [3, 3], "each run of the list has its usage");
      const th = await t.client.threads.get(thread.thread_id) as unknown as { usage: Record<string, number> };
      assert.equal(th.usage.calls, 6);
      assert.equal(th.usage.total_tokens, 360 + 3 * 15);

      const byModel = await (await fetch(`${t.url}/usage?group_by=model`)).json() as {
        rows: Array<{ key: string; calls: number; total_tokens: number }>;
        totals: { total_tokens: number };
      };
      assert.deepEqual(byModel.rows.map((r) => [r.key, r.calls, r.total_tokens]), [["openai:gpt-test", 6, 405]]);
      const byDay = await (await fetch(`${t.url}/usage?group_by=day`)).json() as { rows: Array<{ key: string }> };
      assert.equal(byDay.rows[0]!.key, new Date().toISOString().slice(0, 10));
      const bad = await fetch(`${t.url}/usage?group_by=planet`);
      assert.equal(bad.status, 422);
      assert.match(((await bad.json()) as { detail: string }).detail, /group_by="planet" is not a grouping/);
    });

    test("a provider that reports no usage: the tokens are counted from the text", async () => {
      models.script({ text: "x".repeat(400), usage: null, when: "estimate-me" });
      const out = await t.client.runs.wait(null, "agent", {
        input: { messages: [{ role: "user", content: "estimate-me" }] },
      });
      assert.ok(out);
      const rows = await (await fetch(`${t.url}/usage?group_by=day`)).json() as {
        totals: { calls: number; output_tokens: number };
      };
      assert.equal(rows.totals.calls, 7);
      assert.equal(rows.totals.output_tokens, 60 + 3 * 5 + 100, "400 characters counted as 100 tokens");
    });
  });
}

describe("who reads what", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      graphs: { agent: async () => agentGraph() },
      usage: { prices: PRICES, ownerKey: "owner-key-0123456789" },
      authenticate: async (req) => {
        if (!req.headers.get("x-user")) throw Object.assign(new Error("Sign in"), { status: 401 });
        const who = req.headers.get("x-user");
        if (who === "owner") return { identity: "platform", isAuthenticated: true, shared: true };
        return who ? { identity: who, isAuthenticated: true } : null;
      },
    });
  });
  after(async () => await t?.close());

  test("the owner reads everyone's usage by user; a user reads only their own", async () => {
    for (const [user, marker] of [["alice", "ant"], ["bob", "bee"]]) {
      scriptTurn(marker!);
      const res = await fetch(`${t.url}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-user": user! },
        body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "user", content: marker }] } }),
      });
      assert.equal(res.status, 200, await res.clone().text());
    }
    const read = async (user: string, query = "") =>
      await (await fetch(`${t.url}/usage?group_by=user${query}`, { headers: { "x-user": user } })).json() as {
        rows: Array<{ key: string; calls: number }>;
        detail?: string;
      };
    assert.deepEqual((await read("owner")).rows.map((r) => [r.key, r.calls]).sort(), [
      ["user:alice", 3],
      ["user:bob", 3],
    ]);
    assert.deepEqual((await read("owner", "&user=user:bob")).rows.map((r) => r.key), ["user:bob"]);
    assert.deepEqual((await read("alice")).rows.map((r) => r.key), ["user:alice"]);
    const byKey = await fetch(`${t.url}/usage?group_by=user`, { headers: { "x-api-key": "owner-key-0123456789" } });
    assert.equal(byKey.status, 200, "the owner's key is the owner under an identity provider");
    assert.equal(((await byKey.json()) as { rows: unknown[] }).rows.length, 2);
    const wrongKey = await fetch(`${t.url}/usage`, { headers: { "x-api-key": "not-the-key" } });
    assert.equal(wrongKey.status, 401, "any other key is authenticated as every other request");
    const refused = await fetch(`${t.url}/usage?user=user:bob`, { headers: { "x-user": "alice" } });
    assert.equal(refused.status, 422);
    assert.match(((await refused.json()) as { detail: string }).detail, /user="user:bob" is not you/);
  });
});
