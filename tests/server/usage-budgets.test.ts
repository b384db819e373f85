/**
 * Usage budgets and rate limits (./_usage.ts's agent through the SDK): a new run over a
 * runs-per-minute limit or a spent daily budget is a 429 with Retry-After naming the limit; a
 * run in flight that crosses a daily budget ends with an error event naming it (its last call
 * too: that call's answer is kept), the usage read either way; a cron's runs count and are
 * refused as they start. With PostgreSQL, two replicas share one budget.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { NO_USAGE_LIMITS } from "../../core/engine/index.ts";
import { sqlOf } from "../../core/storage/storage.ts";
import { pgSchema, startTestServer, until } from "./_harness.ts";
import {
  agentGraph,
  models,
  post,
  PRICES,
  scriptTurn,
  serverWith,
  streamedError,
  useModels,
  useTraceRetention,
  waitForMinuteStart,
  WAYS,
} from "./_usage.ts";

useModels();

for (const way of WAYS) {
  describe(`a run in flight that crosses a daily budget (${way.name})`, () => {
    before(() => {
      useTraceRetention(way.traceRetentionSeconds);
    });
    after(() => {
      useTraceRetention(604_800);
    });

    test("a run that crosses the daily token budget ends with an error event naming it; the next is refused", async () => {
      const t = await serverWith({ userTokensPerDay: 20 });
      try {
        scriptTurn("budget");
        const thread = await t.client.threads.create();
        const error = await streamedError(t, thread.thread_id, "budget");
        const data = error.data;
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
        const error = await streamedError(t, null, "costly");
        // One call: (100 * $1 + 20 * $2) per million.
        assert.match(
          error.data.message,
          /the daily cost budget \(USD\) of one user is used up \(\$0\.00014 of \$0\.0001\)/,
        );
        assert.match(error.data.message, /AGENTCLI_USER_COST_PER_DAY/);
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
        const error = await streamedError(t, thread.thread_id, "last");
        assert.match(error.data.message, /\(45 tokens of 40 tokens\)/);
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

  test("a daily budget set after the day's runs counts what they spent (the counters caught up as it starts)", async () => {
    const onPg = process.env.AGENTCLI_TEST_SERVER_ON_POSTGRES === "1";
    const db = onPg ? await pgSchema("agentcli_catch_up") : null;
    const dir = db ? null : mkdtempSync(join(tmpdir(), "agentcli-catch-up-"));
    const storage = db ? { url: db.url } : { dataDir: dir! };
    try {
      const free = await serverWith({}, storage);
      try {
        scriptTurn("before");
        const thread = await free.client.threads.create();
        await free.client.runs.wait(thread.thread_id, "agent", {
          input: { messages: [{ role: "user", content: "before" }] },
        });
        const counters = await sqlOf(free.server.storage).query("SELECT key FROM usage_counters");
        assert.deepEqual(counters.rows, [], "no daily budget: no counters kept");
      } finally {
        await free.close();
      }
      const limited = await serverWith({ userTokensPerDay: 25, deploymentTokensPerDay: 1000 }, storage);
      try {
        const res = await post(limited, "/runs", { assistant_id: "agent", input: null });
        assert.equal(res.status, 429, "the day's 45 tokens (three calls) count against the new budget of 25");
        assert.match(((await res.json()) as { detail: string }).detail, /daily token budget of one user/);
        const { rows } = await sqlOf(limited.server.storage).query<{ key: string; tokens: string }>(
          "SELECT key, tokens FROM usage_counters WHERE key LIKE 'day:%' ORDER BY key",
        );
        assert.deepEqual(rows.map((r) => [r.key.split(":").slice(0, 2).join(":"), Number(r.tokens)]), [
          ["day:client", 45],
          ["day:deployment", 45],
          ["day:user", 45],
        ]);
      } finally {
        await limited.close();
      }
    } finally {
      await db?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
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
