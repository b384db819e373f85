/**
 * Input bounds and run quotas (README "Limits"): each is enforced before work is done with a
 * 413/429 naming the bound and the variable that raises it; history answers are bounded in
 * bytes and continue with `before`; one maximal request does not stall `/ok`; runs are taken
 * fairly between users, and one user's backlog does not starve another's.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { userError } from "../../core/kernel/errors.ts";
import { DEFAULT_LIMITS, limitsFromEnv } from "../../core/server/http/limits.ts";
import { FIXTURES, startTestServer, type TestServer } from "./_harness.ts";
import { okLatencyDuring } from "../_ok-latency.ts";

const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

/** A server whose callers are "Bearer <name>". */
async function server(opts: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const t = await startTestServer({
    authenticate: async (req) => {
      const auth = req.headers.get("authorization");
      if (!auth) throw userError("UNAUTHORIZED", { message: "Cannot authenticate the request: no bearer token" });
      return { identity: auth.replace(/^Bearer /, ""), isAuthenticated: true };
    },
    ...opts,
  });
  servers.push(t);
  return t;
}

async function call(t: TestServer, who: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${t.url}${path}`, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { authorization: `Bearer ${who}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, json, detail: (json?.detail ?? "") as string };
}

const say = (content: string) => ({ messages: [{ role: "user", content }] });

describe("input bounds", () => {
  test("the variables parse, and a malformed one is an error naming it", () => {
    assert.deepEqual(limitsFromEnv({ AGENTCLI_MAX_MESSAGE_KB: "2", AGENTCLI_MAX_RUNNING_RUNS_PER_USER: "0" }), {
      maxMessageBytes: 2048,
      maxRunningPerOwner: 0,
    });
    assert.throws(
      () => limitsFromEnv({ AGENTCLI_MAX_MESSAGES: "lots" }),
      /AGENTCLI_MAX_MESSAGES="lots" is not a positive number of messages/,
    );
    assert.throws(() => limitsFromEnv({ AGENTCLI_MAX_BODY_MB: "0" }), /AGENTCLI_MAX_BODY_MB/);
  });

  test("a message too large, too many messages, a body too large: 413 naming the limit and its variable; nothing is created", async () => {
    const t = await server({ limits: { maxMessageBytes: 4096, maxMessages: 5, maxBodyBytes: 64 * 1024 } });
    const th = (await call(t, "ann", "POST", "/threads", {})).json.thread_id;
    const big = await call(t, "ann", "POST", `/threads/${th}/runs`, {
      assistant_id: "echo",
      input: say("x".repeat(5000)),
    });
    assert.equal(big.status, 413);
    assert.match(big.detail, /input\.messages\[0\] is 4\.9 KiB; the limit is 4 KiB/);
    assert.match(big.json.hint, /AGENTCLI_MAX_MESSAGE_KB/);
    const many = await call(t, "ann", "POST", `/threads/${th}/runs/wait`, {
      assistant_id: "echo",
      input: { messages: Array.from({ length: 6 }, () => ({ role: "user", content: "hi" })) },
    });
    assert.equal(many.status, 413);
    assert.match(many.detail, /input\.messages has 6 messages; the limit is 5 messages/);
    assert.match(many.json.hint, /AGENTCLI_MAX_MESSAGES/);
    const state = await call(t, "ann", "POST", `/threads/${th}/state`, { values: say("y".repeat(5000)) });
    assert.equal(state.status, 413);
    const body = await call(t, "ann", "POST", "/threads", { metadata: { x: "z".repeat(70 * 1024) } });
    assert.equal(body.status, 413);
    assert.match(body.json.hint, /AGENTCLI_MAX_BODY_MB/);
    assert.deepEqual((await call(t, "ann", "GET", `/threads/${th}/runs`)).json, []);
    // At the bound it goes through.
    assert.equal(
      (await call(t, "ann", "POST", `/threads/${th}/runs/wait`, { assistant_id: "echo", input: say("x".repeat(3900)) }))
        .status,
      200,
    );
  });

  test("history answers stop at AGENTCLI_MAX_HISTORY_MB and continue with before", async () => {
    const t = await server({ limits: { maxHistoryBytes: 40 * 1024 } });
    const th = (await call(t, "ann", "POST", "/threads", {})).json.thread_id;
    for (let i = 0; i < 4; i++) {
      await call(t, "ann", "POST", `/threads/${th}/runs/wait`, {
        assistant_id: "echo",
        input: say(`${i}`.repeat(6000)),
      });
    }
    const all: string[] = [];
    let before: string | undefined;
    for (let page = 0; page < 20; page++) {
      const res = await call(t, "ann", "POST", `/threads/${th}/history`, { limit: 100, ...(before ? { before } : {}) });
      assert.equal(res.status, 200);
      const size = JSON.stringify(res.json).length;
      assert.ok(res.json.length >= 1);
      // Over the budget only by the one state that crossed it.
      assert.ok(res.json.length === 1 || size <= 40 * 1024, `page of ${size} bytes`);
      all.push(...res.json.map((s: any) => s.checkpoint.checkpoint_id));
      before = res.headers.get("x-pagination-next") ?? undefined;
      if (!before) break;
      assert.match(res.headers.get("x-pagination-truncated")!, /AGENTCLI_MAX_HISTORY_MB/);
      assert.equal(before, all.at(-1));
    }
    const whole = await startTestServerHistory(t, th);
    assert.deepEqual(all, whole, "the pages together are the whole history, in order, once each");
  });

  test("one maximal request does not stall /ok", async () => {
    // A graph that answers "ok": what is measured is the server's own work on the input.
    const t = await server({
      graphs: { ...FIXTURES, short: async () => (await import("../fixtures/graphs/short-reply.ts")).graph },
    });
    const th = (await call(t, "ann", "POST", "/threads", {})).json.thread_id;
    await call(t, "ann", "POST", `/threads/${th}/runs/wait`, { assistant_id: "short", input: say("warm up") });
    // The largest message the defaults accept (a little under AGENTCLI_MAX_MESSAGE_KB).
    const content = "x".repeat(DEFAULT_LIMITS.maxMessageBytes - 100);
    const { result: res, took, during, worst, idleMedian: median } = await okLatencyDuring(
      t.url,
      () => call(t, "ann", "POST", `/threads/${th}/runs/wait`, { assistant_id: "short", input: say(content) }),
    );
    assert.equal(res.status, 200);
    console.log(
      `# /ok idle median ${median.toFixed(1)} ms; during a ${
        took.toFixed(0)
      } ms maximal run: ${during.length} pings, worst ${worst.toFixed(1)} ms`,
    );
    // /ok keeps being answered while the large run is processed, not only after it: pings
    // complete within it, and none waits for the whole of it. (Before the embedded engine
    // yielded between statements and bytea went through the native hex codec, a 1 MiB
    // message held /ok for all of the run, and 10 MiB for some 20 s.)
    assert.ok(during.length >= 2, `only ${during.length} pings were answered during the run`);
    assert.ok(worst < took * 0.9, `/ok waited ${worst.toFixed(0)} ms during a ${took.toFixed(0)} ms request`);
  });
});

/** The whole history of a thread in one answer (no byte budget: a server on the same storage is not needed; the SDK's own limit). */
async function startTestServerHistory(t: TestServer, th: string): Promise<string[]> {
  const ids: string[] = [];
  let before: string | undefined;
  for (;;) {
    const res = await call(t, "ann", "POST", `/threads/${th}/history`, { limit: 1, ...(before ? { before } : {}) });
    if (!res.json.length) return ids;
    ids.push(res.json[0].checkpoint.checkpoint_id);
    before = ids.at(-1);
  }
}

describe("run quotas and fairness", () => {
  test("more runs waiting than AGENTCLI_MAX_QUEUED_RUNS_PER_USER is a 429 with Retry-After; other users are not affected", async () => {
    const t = await server({ limits: { maxQueuedPerOwner: 3 } });
    const created: number[] = [];
    for (let i = 0; i < 4; i++) {
      const th = (await call(t, "ann", "POST", "/threads", {})).json.thread_id;
      created.push(
        (await call(t, "ann", "POST", `/threads/${th}/runs`, {
          assistant_id: "slow",
          input: { ms: 60_000 },
          after_seconds: 3600,
        })).status,
      );
    }
    assert.deepEqual(created, [200, 200, 200, 429]);
    const th = (await call(t, "ann", "POST", "/threads", {})).json.thread_id;
    const refused = await call(t, "ann", "POST", `/threads/${th}/runs`, { assistant_id: "echo", input: say("hi") });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
    assert.match(refused.detail, /you have 3 runs waiting, the limit is 3/);
    assert.match(refused.json.hint, /AGENTCLI_MAX_QUEUED_RUNS_PER_USER/);
    // Refused by the statement that creates the run: nothing was inserted, the thread stays idle.
    assert.deepEqual((await call(t, "ann", "GET", `/threads/${th}/runs`)).json, []);
    assert.equal((await call(t, "ann", "GET", `/threads/${th}`)).json.status, "idle");
    // A run on a new thread (stateless, or if_not_exists "create") is refused the same way.
    assert.equal((await call(t, "ann", "POST", "/runs/wait", { assistant_id: "echo", input: say("hi") })).status, 429);
    assert.equal(
      (await call(t, "ann", "POST", `/threads/${crypto.randomUUID()}/runs`, {
        assistant_id: "echo",
        input: say("hi"),
        if_not_exists: "create",
      })).status,
      429,
    );
    const other = (await call(t, "bo", "POST", "/threads", {})).json.thread_id;
    assert.equal(
      (await call(t, "bo", "POST", `/threads/${other}/runs/wait`, { assistant_id: "echo", input: say("hi") })).status,
      200,
    );
  });

  test("one user's backlog does not starve another's run", async () => {
    const t = await server({ workers: 1 });
    const backlog: Array<{ th: string; run: string }> = [];
    for (let i = 0; i < 12; i++) {
      const th = (await call(t, "ann", "POST", "/threads", {})).json.thread_id;
      backlog.push({
        th,
        run: (await call(t, "ann", "POST", `/threads/${th}/runs`, { assistant_id: "slow", input: { ms: 300 } })).json
          .run_id,
      });
    }
    const finished = async () => {
      let n = 0;
      for (const b of backlog) {
        if ((await call(t, "ann", "GET", `/threads/${b.th}/runs/${b.run}`)).json.status !== "pending") n++;
      }
      return n;
    };
    const bobThread = (await call(t, "bo", "POST", "/threads", {})).json.thread_id;
    const startedBefore = await finished();
    const bob = await call(t, "bo", "POST", `/threads/${bobThread}/runs/wait`, {
      assistant_id: "echo",
      input: say("me too"),
    });
    assert.equal(bob.status, 200);
    const startedAfter = await finished();
    // First come first served would make bob wait for all of ann's waiting runs; taken fairly,
    // his run is next once the running one ends (one more of hers may start while we look).
    assert.ok(startedBefore < backlog.length - 3, `the backlog drained before bob came (${startedBefore} started)`);
    assert.ok(
      startedAfter - startedBefore <= 2,
      `bob's run waited for ${startedAfter - startedBefore} of ann's runs to start`,
    );
    for (const b of backlog) await call(t, "ann", "POST", `/threads/${b.th}/runs/${b.run}/cancel`);
  });

  test("AGENTCLI_MAX_RUNNING_RUNS_PER_USER caps one user's runs executing at once", async () => {
    const t = await server({ workers: 4, limits: { maxRunningPerOwner: 1 } });
    const runs: Array<{ th: string; run: string }> = [];
    for (let i = 0; i < 3; i++) {
      const th = (await call(t, "ann", "POST", "/threads", {})).json.thread_id;
      runs.push({
        th,
        run: (await call(t, "ann", "POST", `/threads/${th}/runs`, { assistant_id: "slow", input: { ms: 400 } })).json
          .run_id,
      });
    }
    const bobThread = (await call(t, "bo", "POST", "/threads", {})).json.thread_id;
    const bob = await call(t, "bo", "POST", `/threads/${bobThread}/runs`, { assistant_id: "slow", input: { ms: 400 } });
    let maxAnn = 0;
    let bobRan = false;
    for (let i = 0; i < 40; i++) {
      const statuses = await Promise.all(
        runs.map(async (r) => (await call(t, "ann", "GET", `/threads/${r.th}/runs/${r.run}`)).json.status),
      );
      maxAnn = Math.max(maxAnn, statuses.filter((s) => s === "running").length);
      if ((await call(t, "bo", "GET", `/threads/${bobThread}/runs/${bob.json.run_id}`)).json.status !== "pending") {
        bobRan = true;
      }
      if (statuses.every((s) => s === "success")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(maxAnn, 1, "at most one of ann's runs executed at a time");
    assert.ok(bobRan, "bob's run was not held back by ann's cap");
  });
});
