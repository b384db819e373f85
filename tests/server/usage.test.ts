/**
 * Usage: a real LangChain agent (ChatOpenAI against the scripted model server, a `task` tool
 * that runs a nested model call as a subagent does) run through the SDK; every model call's
 * tokens and estimated cost are in the run's record, the thread's totals in its, and
 * `GET /usage` groups them (the subagent's call counts toward the parent run). Budgets: a
 * new run over a runs-per-minute limit or a spent daily budget is a 429 with Retry-After
 * naming the limit; a run in flight that crosses a daily token budget ends with an error
 * event naming it. With PostgreSQL, two replicas share one budget.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { z } from "zod";
import { NO_USAGE_LIMITS, Prices, type UsageLimits } from "../../core/engine/index.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { sqlOf } from "../../core/storage/storage.ts";
import { collect, pgSchema, startTestServer, type TestServer, until } from "./_harness.ts";

let models: ModelServer;
const PRICES = new Prices({ openai: { "gpt-test": { input: 1, output: 2, cached_input: 0.5 } } });

/** An agent whose `task` tool runs a subagent graph as deepagents does (invoked with the tool's config). */
function agentGraph() {
  const model = () =>
    new ChatOpenAI({ model: "gpt-test", apiKey: "sk-test", configuration: { baseURL: models.openaiBaseUrl } });
  const subagent = createAgent({ model: model(), tools: [] });
  const task = tool(
    async ({ description }, config) => {
      const out = await subagent.invoke({ messages: [{ role: "user", content: `subagent: ${description}` }] }, config);
      return out.messages.at(-1)!.content as string;
    },
    {
      name: "task",
      description: "Runs a subagent",
      schema: z.object({ description: z.string(), subagent_type: z.string() }),
    },
  );
  return createAgent({ model: model(), tools: [task] });
}

/** Scripts one turn of `marker`: a task call, the subagent's answer, the final answer (3 model calls). */
function scriptTurn(marker: string, usage?: { input: number; output: number; cached?: number }) {
  models.script(
    { toolCalls: [{ name: "task", args: { description: `dig ${marker}`, subagent_type: "r" } }], when: marker, usage },
    { text: `found ${marker}`, when: `subagent: dig ${marker}`, usage },
    { text: `done ${marker}`, when: (r) => r.messages.some((m) => m.content.includes(`found ${marker}`)), usage },
  );
}

/**
 * Usage is read two ways (core/engine/usage/stream-usage.ts): from the run's stream when the
 * run has no callback handler (traces off), by the handler when it has one (traces kept, the
 * default). The tests of recording and budgets run both ways.
 */
const WAYS = [
  { name: "traces kept: the handler counts", traceRetentionSeconds: 604_800 },
  { name: "traces off: read from the stream", traceRetentionSeconds: 0 },
];
let traceRetentionSeconds = 604_800;

async function serverWith(limits: Partial<UsageLimits>, storage?: { url: string }): Promise<TestServer> {
  return await startTestServer({
    graphs: { agent: async () => agentGraph() },
    usage: { prices: PRICES, limits: { ...NO_USAGE_LIMITS, ...limits } },
    ttl: { traceRetentionSeconds },
    ...(storage ? { storage } : {}),
  });
}

async function post(t: TestServer, path: string, body: unknown): Promise<Response> {
  return await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

before(async () => {
  models = await startModelServer();
});
after(async () => {
  await models?.close();
});

for (const way of WAYS) {
  describe(`usage recorded and readable (${way.name})`, () => {
    let t: TestServer;
    before(async () => {
      traceRetentionSeconds = way.traceRetentionSeconds;
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

for (const way of WAYS) {
  describe(`a run in flight that crosses a daily budget (${way.name})`, () => {
    before(() => {
      traceRetentionSeconds = way.traceRetentionSeconds;
    });
    after(() => {
      traceRetentionSeconds = 604_800;
    });

    test("a run that crosses the daily token budget ends with an error event naming it; the next is refused", async () => {
      const t = await serverWith({ userTokensPerDay: 20 });
      try {
        scriptTurn("budget");
        const thread = await t.client.threads.create();
        const events = await collect(t.client.runs.stream(thread.thread_id, "agent", {
          input: { messages: [{ role: "user", content: "budget" }] },
        }));
        const error = events.find((e) => e.event === "error");
        assert.ok(error, `an error event among ${events.map((e) => e.event).join(", ")}`);
        const data = error.data as { error: string; message: string };
        assert.equal(data.error, "UsageLimitExceeded");
        assert.match(data.message, /the daily token budget of one user is used up \(30 tokens of 20 tokens\)/);
        assert.match(data.message, /AGENTCLI_USER_TOKENS_PER_DAY/);
        const runs = await t.client.runs.list(thread.thread_id);
        assert.equal(runs[0]!.status, "error");
        const res = await post(t, `/threads/${thread.thread_id}/runs`, { assistant_id: "agent", input: null });
        assert.equal(res.status, 429);
        assert.ok(Number(res.headers.get("retry-after")) > 60, "retry at the next UTC day");
        assert.match(((await res.json()) as { detail: string }).detail, /daily token budget of one user/);
      } finally {
        await t.close();
      }
    });

    test("a run that crosses the daily cost budget stops too", async () => {
      const t = await serverWith({ userCostPerDay: 0.0001 });
      try {
        scriptTurn("costly", { input: 100, output: 20 });
        const events = await collect(t.client.runs.stream(null, "agent", {
          input: { messages: [{ role: "user", content: "costly" }] },
        }));
        const error = events.find((e) => e.event === "error");
        assert.ok(error, `an error event among ${events.map((e) => e.event).join(", ")}`);
        // One call: (100 * $1 + 20 * $2) per million.
        assert.match(
          (error.data as { message: string }).message,
          /the daily cost budget \(USD\) of one user is used up \(\$0\.00014 of \$0\.0001\)/,
        );
        assert.match((error.data as { message: string }).message, /AGENTCLI_USER_COST_PER_DAY/);
      } finally {
        await t.close();
      }
    });

    test("the run's last call crosses it: the answer is kept, the run ends with the error event all the same", async () => {
      // Three calls of 15 tokens: the third (the final answer) takes the user from 30 to 45 of 40.
      const t = await serverWith({ userTokensPerDay: 40 });
      try {
        scriptTurn("last");
        const thread = await t.client.threads.create();
        const events = await collect(t.client.runs.stream(thread.thread_id, "agent", {
          input: { messages: [{ role: "user", content: "last" }] },
        }));
        const error = events.find((e) => e.event === "error");
        assert.ok(error, `an error event among ${events.map((e) => e.event).join(", ")}`);
        assert.match((error.data as { message: string }).message, /\(45 tokens of 40 tokens\)/);
        assert.equal((await t.client.runs.list(thread.thread_id))[0]!.status, "error");
        const state = await t.client.threads.getState(thread.thread_id);
        const messages = (state.values as { messages: Array<{ content: unknown }> }).messages;
        assert.equal(messages.at(-1)!.content, "done last", "the call was made: its answer is in the thread");
      } finally {
        await t.close();
      }
    });
  });
}

describe("budgets and rate limits", () => {
  test("over the runs per minute: 429, Retry-After, the limit named", async () => {
    const t = await serverWith({ userRunsPerMinute: 2 });
    try {
      await waitForMinuteStart();
      const thread = await t.client.threads.create();
      for (let i = 0; i < 2; i++) {
        const res = await post(t, `/threads/${thread.thread_id}/runs`, { assistant_id: "agent", input: null });
        assert.equal(res.status, 200, await res.clone().text());
      }
      const res = await post(t, `/threads/${thread.thread_id}/runs`, { assistant_id: "agent", input: null });
      assert.equal(res.status, 429);
      const retry = Number(res.headers.get("retry-after"));
      assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
      const body = await res.json() as { detail: string; hint: string };
      assert.match(body.detail, /the runs per minute of one user is used up \(2 runs of 2 runs\)/);
      assert.match(body.hint, /AGENTCLI_USER_RUNS_PER_MINUTE/);
    } finally {
      await t.close();
    }
  });

  test("anonymous visitors: per browser cookie, and per client address", async () => {
    const t = await serverWith({ userRunsPerMinute: 1, clientRunsPerMinute: 2 });
    try {
      await waitForMinuteStart();
      const cookie = (id: string) => ({ cookie: `agentcli_browser_id=${id}` });
      const run = (headers: Record<string, string>) =>
        fetch(`${t.url}/runs`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ assistant_id: "agent", input: null }),
        });
      const a = "11111111-1111-4111-8111-111111111111";
      const b = "22222222-2222-4222-8222-222222222222";
      const c = "33333333-3333-4333-8333-333333333333";
      assert.equal((await run(cookie(a))).status, 200);
      const again = await run(cookie(a));
      assert.equal(again.status, 429, "the same browser twice in a minute");
      assert.match(((await again.json()) as { detail: string }).detail, /runs per minute of one user/);
      assert.equal((await run(cookie(b))).status, 200, "another browser");
      const third = await run(cookie(c));
      assert.equal(third.status, 429, "a third browser from the same address");
      assert.match(((await third.json()) as { detail: string }).detail, /runs per minute of one client address/);
    } finally {
      await t.close();
    }
  });

  test("behind a proxy, the address is the one its header names (AGENTCLI_CLIENT_ADDRESS_HEADER)", async () => {
    const t = await startTestServer({
      graphs: { agent: async () => agentGraph() },
      usage: { limits: { ...NO_USAGE_LIMITS, clientRunsPerMinute: 1 }, addressHeader: "X-Forwarded-For" },
    });
    try {
      await waitForMinuteStart();
      const run = (xff: string) =>
        fetch(`${t.url}/runs`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-for": xff },
          body: JSON.stringify({ assistant_id: "agent", input: null }),
        });
      assert.equal((await run("203.0.113.7")).status, 200);
      assert.equal((await run("198.51.100.1, 203.0.113.8")).status, 200, "the last entry: the proxy's");
      const again = await run("10.0.0.1, 203.0.113.7");
      assert.equal(again.status, 429, "the same client behind the proxy");
      assert.match(((await again.json()) as { detail: string }).detail, /runs per minute of one client address/);
    } finally {
      await t.close();
    }
  });

  test("the deployment's limits bind every caller together", async () => {
    const t = await serverWith({ deploymentRunsPerMinute: 2 });
    try {
      await waitForMinuteStart();
      const run = (id: string) =>
        fetch(`${t.url}/runs`, {
          method: "POST",
          headers: { "content-type": "application/json", cookie: `agentcli_browser_id=${id}` },
          body: JSON.stringify({ assistant_id: "agent", input: null }),
        });
      assert.equal((await run("44444444-4444-4444-8444-444444444444")).status, 200);
      assert.equal((await run("55555555-5555-4555-8555-555555555555")).status, 200);
      const third = await run("66666666-6666-4666-8666-666666666666");
      assert.equal(third.status, 429);
      const body = (await third.json()) as { detail: string; hint: string };
      assert.match(body.detail, /the deployment's runs per minute is used up/);
      assert.match(body.hint, /AGENTCLI_DEPLOYMENT_RUNS_PER_MINUTE/);
    } finally {
      await t.close();
    }
  });

  test("a cron's runs count and are refused over a limit: the run fails naming it, the cron keeps its schedule", async () => {
    const t = await startTestServer({
      graphs: { agent: async () => agentGraph() },
      usage: { prices: PRICES, limits: { ...NO_USAGE_LIMITS, deploymentRunsPerMinute: 1 } },
      cronPollMs: 50,
    });
    try {
      await waitForMinuteStart();
      const sql = sqlOf(t.server.storage);
      const runsOf = async (cronId: string) =>
        (await sql.query<{ run_id: string; status: string }>(
          "SELECT run_id, status FROM runs WHERE metadata->>'cron_id' = $1 ORDER BY seq",
          [cronId],
        )).rows;
      models.script({ text: "tock", when: "tick" });
      const thread = await t.client.threads.create();
      const cron = await t.client.crons.createForThread(thread.thread_id, "agent", {
        schedule: "0 0 1 1 *",
        input: { messages: [{ role: "user", content: "tick" }] },
      });
      const due = () =>
        sql.query("UPDATE crons SET next_run_date = now() - interval '1 second' WHERE cron_id = $1", [
          cron.cron_id,
        ]);
      await due();
      await until(
        "the first firing's run",
        async () => (await runsOf(cron.cron_id)).find((r) => r.status === "success"),
      );
      const api = await post(t, "/runs", { assistant_id: "agent", input: null });
      assert.equal(api.status, 429, "the cron's run counted in the deployment's runs per minute");
      await due();
      const refused = await until(
        "the second firing's run",
        async () => (await runsOf(cron.cron_id)).find((r) => r.status === "error"),
      );
      const out = await t.client.runs.join(thread.thread_id, refused.run_id) as { __error__?: { message: string } };
      assert.match(out.__error__!.message, /the deployment's runs per minute is used up/);
      assert.match(out.__error__!.message, /AGENTCLI_DEPLOYMENT_RUNS_PER_MINUTE/);
      const [after] = await t.client.crons.search({ threadId: thread.thread_id });
      assert.ok(new Date(after!.next_run_date!).getTime() > Date.now(), "the cron keeps its schedule");
    } finally {
      await t.close();
    }
  });

  test(
    "two replicas on one database share one budget",
    { skip: process.env.AGENTCLI_TEST_SERVER_ON_POSTGRES !== "1" },
    async () => {
      const db = await pgSchema("agentcli_usage");
      const a = await serverWith({ userRunsPerMinute: 3 }, { url: db.url });
      const b = await serverWith({ userRunsPerMinute: 3 }, { url: db.url });
      try {
        await waitForMinuteStart();
        const statuses: number[] = [];
        for (const t of [a, b, a, b]) {
          statuses.push((await post(t, "/runs", { assistant_id: "agent", input: null })).status);
        }
        assert.deepEqual(statuses, [200, 200, 200, 429]);
      } finally {
        await a.close();
        await b.close();
        await db.drop();
      }
    },
  );
});

/** Waits for a minute with time left in it (a per-minute window must not roll over mid-test). */
async function waitForMinuteStart(): Promise<void> {
  while (new Date().getUTCSeconds() > 45) await new Promise((r) => setTimeout(r, 250));
}
