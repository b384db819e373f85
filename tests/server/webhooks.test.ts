/**
 * Run webhooks against a local receiver (node:http on a free port): the final result of a
 * run (success, error, interrupted) arrives as LangGraph sends it, signed with
 * AGENTCLI_WEBHOOK_SECRET's HMAC; 5xx answers are retried, 4xx are not, a silent receiver
 * times out; each outcome is in the run's `metadata.webhook_delivery`. Private and loopback
 * targets are refused under `serve` settings unless allowed, also when a host name resolves to
 * a public address for the check and to a private one for the connection (DNS rebinding).
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { after, before, describe, test } from "node:test";
import {
  isPrivateAddress,
  type Resolver,
  type WebhookDelivery,
  webhooksFromEnv,
} from "../../core/engine/runs/webhooks.ts";
import { startTestServer, type TestServer, until } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

const SECRET = "webhook-test-secret";
const INPUT = { messages: [{ role: "user", content: "hook" }] };

interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  raw: string;
  body: Record<string, unknown>;
}

/** A receiver answering each path from a list of statuses (then 200); "hang" never answers. */
async function startReceiver(): Promise<
  { url: string; got: Received[]; plan: Map<string, Array<number | "hang">>; close(): Promise<void> }
> {
  const got: Received[] = [];
  const plan = new Map<string, Array<number | "hang">>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      got.push({ path: req.url ?? "", headers: req.headers, raw, body: JSON.parse(raw) });
      const next = plan.get(req.url ?? "")?.shift() ?? 200;
      if (next === "hang") return;
      res.writeHead(next).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    got,
    plan,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("run webhooks", () => {
  let t: TestServer;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    rx = await startReceiver();
    t = await startTestServer({
      cronPollMs: 50,
      webhooks: { allowPrivate: true, secret: SECRET, backoffMs: 10, timeoutMs: 500, maxAttempts: 3 },
    });
  });
  after(async () => {
    await t?.close();
    await rx?.close();
  });

  const delivery = (threadId: string, runId: string) =>
    until(
      "the delivery record",
      async () => (await t.client.runs.get(threadId, runId)).metadata?.webhook_delivery as WebhookDelivery | undefined,
    );

  test("a successful run's result arrives signed, and its delivery is recorded", async () => {
    const th = await t.client.threads.create();
    const run = await t.client.runs.create(th.thread_id, "echo", { input: INPUT, webhook: `${rx.url}/ok?token=abc` });
    const rec = await delivery(th.thread_id, run.run_id);
    assert.deepEqual({ ...rec, at: "" }, {
      status: "delivered",
      attempts: 1,
      response_status: 200,
      error: null,
      at: "",
    });
    const got = rx.got.find((g) => g.body.run_id === run.run_id)!;
    assert.equal(got.path, "/ok?token=abc");
    assert.equal(got.body.status, "success");
    assert.equal(got.body.thread_id, th.thread_id);
    assert.equal(got.body.assistant_id, run.assistant_id);
    assert.equal(got.body.error, null);
    assert.ok(!Number.isNaN(Date.parse(got.body.webhook_sent_at as string)));
    assert.equal((got.body.kwargs as { webhook: string }).webhook, `${rx.url}/ok?token=abc`);
    assert.equal(
      ((got.body.values as { messages: Array<{ content: string }> }).messages.at(-1)!).content,
      "echo: hook",
    );
    assert.equal(got.headers["content-type"], "application/json");
    assert.equal(
      got.headers["x-agentcli-signature"],
      `sha256=${createHmac("sha256", SECRET).update(got.raw).digest("hex")}`,
    );
  });

  test("an error and an interrupted run are sent with their status", async () => {
    const th = await t.client.threads.create();
    const failed = await t.client.runs.create(th.thread_id, "slow", {
      input: { fail: true },
      webhook: `${rx.url}/fail`,
    });
    assert.equal((await delivery(th.thread_id, failed.run_id)).status, "delivered");
    const got = rx.got.find((g) => g.body.run_id === failed.run_id)!;
    assert.equal(got.body.status, "error");
    assert.match(got.body.error as string, /slow graph failed on purpose/);

    const th2 = await t.client.threads.create();
    const slow = await t.client.runs.create(th2.thread_id, "slow", {
      input: { ms: 60_000 },
      webhook: `${rx.url}/cancel`,
      streamMode: "custom",
    });
    for await (const e of t.client.runs.joinStream(th2.thread_id, slow.run_id)) if (e.event === "custom") break;
    await t.client.runs.cancel(th2.thread_id, slow.run_id, true);
    assert.equal((await delivery(th2.thread_id, slow.run_id)).status, "delivered");
    assert.equal(rx.got.find((g) => g.body.run_id === slow.run_id)!.body.status, "interrupted");

    // A run cancelled while it waits (it never ran) ends interrupted too, and says so.
    const later = await t.client.runs.create(th2.thread_id, "slow", {
      input: { ms: 1 },
      afterSeconds: 3600,
      webhook: `${rx.url}/pending`,
    });
    await t.client.runs.cancel(th2.thread_id, later.run_id);
    assert.equal((await delivery(th2.thread_id, later.run_id)).status, "delivered");
    assert.equal(rx.got.find((g) => g.body.run_id === later.run_id)!.body.status, "interrupted");
  });

  test("5xx is retried with backoff, 4xx is not, a silent receiver times out", async () => {
    const th = await t.client.threads.create();
    rx.plan.set("/flaky", [503, 502]);
    const flaky = await t.client.runs.create(th.thread_id, "echo", { input: INPUT, webhook: `${rx.url}/flaky` });
    const r1 = await delivery(th.thread_id, flaky.run_id);
    assert.equal(r1.status, "delivered");
    assert.equal(r1.attempts, 3);
    assert.equal(rx.got.filter((g) => g.body.run_id === flaky.run_id).length, 3);

    rx.plan.set("/gone", [410]);
    const gone = await t.client.runs.create(th.thread_id, "echo", {
      input: INPUT,
      webhook: `${rx.url}/gone`,
      multitaskStrategy: "enqueue",
    });
    const r2 = await delivery(th.thread_id, gone.run_id);
    assert.deepEqual([r2.status, r2.attempts, r2.response_status, r2.error], ["failed", 1, 410, "answered 410"]);

    rx.plan.set("/silent", ["hang", "hang", "hang"]);
    const silent = await t.client.runs.create(th.thread_id, "echo", {
      input: INPUT,
      webhook: `${rx.url}/silent`,
      multitaskStrategy: "enqueue",
    });
    const r3 = await delivery(th.thread_id, silent.run_id);
    assert.deepEqual([r3.status, r3.attempts, r3.response_status, r3.error], [
      "failed",
      3,
      null,
      "no answer within 0.5 s",
    ]);
  });

  test("a stateless run and a cron's runs call their webhook", async () => {
    const out = await t.client.runs.wait(null, "echo", { input: INPUT, webhook: `${rx.url}/stateless` });
    assert.ok(out);
    const got = await until("the stateless delivery", async () => rx.got.find((g) => g.path === "/stateless"));
    assert.equal(got.body.status, "success");

    const th = await t.client.threads.create();
    const cron = await t.client.crons.createForThread(th.thread_id, "echo", {
      schedule: "0 0 1 1 *",
      input: INPUT,
      webhook: `${rx.url}/cron`,
    });
    assert.equal(cron.payload.webhook, `${rx.url}/cron`);
    await sqlOf(t.server.storage).query(
      "UPDATE crons SET next_run_date = now() - interval '1 second' WHERE cron_id = $1",
      [cron.cron_id],
    );
    const fromCron = await until("the cron run's delivery", async () => rx.got.find((g) => g.path === "/cron"));
    assert.equal((fromCron.body.metadata as { cron_id: string }).cron_id, cron.cron_id);
  });

  test("a webhook that is not an http(s) URL is a 422", async () => {
    const th = await t.client.threads.create();
    for (const webhook of ["ftp://example.com/x", "not a url", "javascript:alert(1)"]) {
      await assert.rejects(
        t.client.runs.create(th.thread_id, "echo", { input: INPUT, webhook }),
        /422.*webhook: must be an http:\/\/ or https:\/\/ URL/s,
      );
      await assert.rejects(t.client.crons.create("echo", { schedule: "* * * * *", webhook }), /422/);
    }
  });
});

describe("webhook targets under serve (SSRF guard)", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ webhooks: webhooksFromEnv({}, "serve") });
  });
  after(async () => {
    await t?.close();
  });

  test("loopback, private and link-local targets are refused with a 422 naming the setting", async () => {
    const th = await t.client.threads.create();
    for (
      const webhook of [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://10.1.2.3/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
      ]
    ) {
      const res = await fetch(`${t.url}/threads/${th.thread_id}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "echo", input: INPUT, webhook }),
      });
      assert.equal(res.status, 422, webhook);
      assert.match(
        ((await res.json()) as { detail: string }).detail,
        /is refused: .*AGENTCLI_WEBHOOK_ALLOW_PRIVATE=true/,
        webhook,
      );
    }
    assert.equal((await t.client.runs.list(th.thread_id)).length, 0);
  });

  test("settings: dev allows private targets, serve only when told; bad values stop the start", () => {
    assert.equal(webhooksFromEnv({}, "dev").allowPrivate, true);
    assert.equal(webhooksFromEnv({}, "serve").allowPrivate, false);
    assert.equal(webhooksFromEnv({ AGENTCLI_WEBHOOK_ALLOW_PRIVATE: "true" }, "serve").allowPrivate, true);
    const s = webhooksFromEnv({
      AGENTCLI_WEBHOOK_SECRET: "x",
      AGENTCLI_WEBHOOK_TIMEOUT_SECONDS: "3",
      AGENTCLI_WEBHOOK_MAX_ATTEMPTS: "2",
    }, "serve");
    assert.deepEqual([s.secret, s.timeoutMs, s.maxAttempts], ["x", 3000, 2]);
    assert.throws(
      () => webhooksFromEnv({ AGENTCLI_WEBHOOK_ALLOW_PRIVATE: "maybe" }, "serve"),
      /AGENTCLI_WEBHOOK_ALLOW_PRIVATE="maybe" is not true or false/,
    );
    assert.throws(
      () => webhooksFromEnv({ AGENTCLI_WEBHOOK_MAX_ATTEMPTS: "0" }, "serve"),
      /AGENTCLI_WEBHOOK_MAX_ATTEMPTS="0" is not a whole number from 1 to 20/,
    );
  });

  test("private address ranges", () => {
    for (
      const ip of [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "::",
        "fd00::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:7f00:1",
        "::ffff:a9fe:a9fe",
      ]
    ) {
      assert.equal(isPrivateAddress(ip), true, ip);
    }
    for (const ip of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
      assert.equal(isPrivateAddress(ip), false, ip);
    }
  });
});

describe("webhook hosts are resolved once per connection, and what is checked is what is dialled", () => {
  // Host names answered by the test as a DNS server would: "rebind.test" is public for its
  // first answer (the check when the run is created) and loopback after (the delivery);
  // "pinned.test" is always loopback. Neither exists: a delivery reaches the receiver only
  // through these answers, never a second resolution of its own.
  const answers = new Map<string, string[]>();
  const asked: string[] = [];
  const resolver: Resolver = async (host) => {
    asked.push(host);
    const list = answers.get(host);
    if (!list?.length) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return [{ address: list.length > 1 ? list.shift()! : list[0]!, family: 4 }];
  };
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let serve: TestServer;
  let dev: TestServer;
  before(async () => {
    rx = await startReceiver();
    const settings = { backoffMs: 10, timeoutMs: 2000, maxAttempts: 2 };
    serve = await startTestServer({
      webhooks: { ...webhooksFromEnv({}, "serve"), ...settings },
      webhookResolver: resolver,
    });
    dev = await startTestServer({
      webhooks: { ...webhooksFromEnv({}, "dev"), ...settings },
      webhookResolver: resolver,
    });
  });
  after(async () => {
    await serve?.close();
    await dev?.close();
    await rx?.close();
  });
  const port = () => new URL(rx.url).port;

  test("a name that resolves to a public address for the check and to loopback for the delivery is refused, and nothing is sent", async () => {
    answers.set("rebind.test", ["93.184.216.34", "127.0.0.1"]);
    const th = await serve.client.threads.create();
    const run = await serve.client.runs.create(th.thread_id, "echo", {
      input: INPUT,
      webhook: `http://rebind.test:${port()}/rebind`,
    });
    const rec = await until(
      "the delivery record",
      async () =>
        (await serve.client.runs.get(th.thread_id, run.run_id)).metadata?.webhook_delivery as
          | WebhookDelivery
          | undefined,
    );
    assert.deepEqual([rec.status, rec.attempts, rec.response_status], ["refused", 1, null]);
    assert.match(
      rec.error!,
      /^refused: its host "rebind\.test" resolves to 127\.0\.0\.1, a private or loopback address$/,
    );
    assert.equal(rx.got.filter((g) => g.path === "/rebind").length, 0);
    assert.deepEqual(asked.filter((h) => h === "rebind.test").length, 2, "once for the check, once for the connection");
  });

  test("the delivery dials the address its own lookup answered (allowed where private targets are)", async () => {
    answers.set("pinned.test", ["127.0.0.1"]);
    const th = await dev.client.threads.create();
    const run = await dev.client.runs.create(th.thread_id, "echo", {
      input: INPUT,
      webhook: `http://pinned.test:${port()}/pinned`,
    });
    const rec = await until(
      "the delivery record",
      async () =>
        (await dev.client.runs.get(th.thread_id, run.run_id)).metadata?.webhook_delivery as WebhookDelivery | undefined,
    );
    assert.deepEqual([rec.status, rec.response_status, rec.error], ["delivered", 200, null]);
    const got = rx.got.find((g) => g.path === "/pinned")!;
    assert.equal(got.headers.host, `pinned.test:${port()}`);
    assert.equal(got.body.run_id, run.run_id);
  });

  test("an unresolvable host is recorded as a failed delivery, retried", async () => {
    const th = await dev.client.threads.create();
    const run = await dev.client.runs.create(th.thread_id, "echo", {
      input: INPUT,
      webhook: `http://nowhere.test:${port()}/x`,
    });
    const rec = await until(
      "the delivery record",
      async () =>
        (await dev.client.runs.get(th.thread_id, run.run_id)).metadata?.webhook_delivery as WebhookDelivery | undefined,
    );
    assert.deepEqual([rec.status, rec.attempts, rec.response_status], ["failed", 2, null]);
    assert.match(rec.error!, /^cannot connect: .*ENOTFOUND nowhere\.test/);
  });
});
