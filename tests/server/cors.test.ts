import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { corsFromEnv } from "../../core/server/http/cors.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

const preflight = (url: string, origin: string) =>
  fetch(`${url}/threads`, {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type,x-api-key",
    },
  });

describe("CORS settings", () => {
  it("refuses * with credentials and a malformed origin", () => {
    assert.throws(
      () => corsFromEnv({ CORS_ALLOW_ORIGINS: "*", CORS_ALLOW_CREDENTIALS: "true" }, "serve"),
      /CORS_ALLOW_ORIGINS is \* while CORS_ALLOW_CREDENTIALS/,
    );
    assert.throws(() => corsFromEnv({ CORS_ALLOW_ORIGINS: "example.com" }, "serve"), /not an origin/);
    assert.throws(() => corsFromEnv({ CORS_ALLOW_CREDENTIALS: "yes" }, "serve"), /not true or false/);
  });
});

describe("CORS under dev defaults", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ cors: corsFromEnv({}, "dev"), heartbeatMs: 50 });
  });
  after(async () => {
    await s.close();
  });

  it("answers a local origin's preflight and refuses a foreign one", async () => {
    const ok = await preflight(s.url, "http://localhost:5173");
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get("access-control-allow-origin"), "http://localhost:5173");
    assert.match(ok.headers.get("access-control-allow-headers") ?? "", /x-api-key/);
    const no = await preflight(s.url, "https://evil.example");
    assert.equal(no.status, 403);
    assert.equal(no.headers.get("access-control-allow-origin"), null);
  });

  it("exposes the SDK's headers on actual requests; a foreign text/plain POST is still 415", async () => {
    const res = await fetch(`${s.url}/threads`, {
      method: "POST",
      headers: { Origin: "http://127.0.0.1:3000", "Content-Type": "application/json" },
      body: "{}",
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("access-control-allow-origin"), "http://127.0.0.1:3000");
    assert.match(res.headers.get("access-control-expose-headers") ?? "", /Content-Location/);
    const foreign = await fetch(`${s.url}/threads`, {
      method: "POST",
      headers: { Origin: "https://evil.example", "Content-Type": "text/plain" },
      body: "{}",
    });
    assert.equal(foreign.status, 415);
    assert.equal(foreign.headers.get("access-control-allow-origin"), null);
  });

  it("sends a heartbeat on an idle stream", async () => {
    const thread = await s.client.threads.create();
    const run = await s.client.runs.create(thread.thread_id, "slow", { input: { ms: 1000 } });
    const res = await fetch(`${s.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, {
      headers: { Origin: "http://localhost:1" },
    });
    assert.equal(res.headers.get("access-control-allow-origin"), "http://localhost:1");
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes(": heartbeat")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    assert.match(text, /: heartbeat\n\n/);
  });
});

describe("CORS under serve", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({
      cors: corsFromEnv({
        CORS_ALLOW_ORIGINS: "https://app.example",
        CORS_ALLOW_CREDENTIALS: "true",
        CORS_ALLOW_HEADERS: "content-type,authorization",
      }, "serve"),
    });
  });
  after(async () => {
    await s.close();
  });

  it("allows only configured origins, with credentials and the configured headers", async () => {
    const ok = await preflight(s.url, "https://app.example");
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get("access-control-allow-credentials"), "true");
    assert.equal(ok.headers.get("access-control-allow-headers"), "content-type,authorization");
    assert.equal((await preflight(s.url, "http://localhost:5173")).status, 403);
  });
});
