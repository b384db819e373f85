/**
 * The redaction filter itself (core/kernel/redact.ts, core/server/http/redact-responses.ts): a registered
 * secret is caught whole, as any run of 16+ of its characters (a key without its `sk-`
 * prefix), JSON-escaped, URL-encoded and in base64 at every alignment; a stream is redacted
 * even when a secret is split across two chunks; every text response of a Hono app passes
 * through the middleware, binary ones are left alone; a run's event stream, whose events were
 * redacted when the run emitted them, is let through and redacts what it writes itself.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Buffer } from "node:buffer";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import {
  MIN_FRAGMENT_LENGTH,
  redact,
  REDACTED,
  redactingStream,
  registerSecrets,
  secretValues,
} from "../../core/kernel/redact.ts";
import { REDACTED_AT_SOURCE, redactResponses } from "../../core/server/http/redact-responses.ts";
import { sseResponse } from "../../core/server/http/sse.ts";

const KEY = `sk-filter${crypto.randomUUID().replaceAll("-", "")}`;
const QUOTED = `pw"with\\quote${crypto.randomUUID().slice(0, 8)}`;
registerSecrets(
  secretValues({
    OPENAI_API_KEY: KEY,
    MY_QUOTED_SECRET: QUOTED,
    DATABASE_URL: "postgres://app:dbpassword123456@db:5432/x",
    HOME: "/home/someone-long-enough",
  }),
);

test("a registered key, its fragments and its encodings are redacted; ordinary text is not", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const copies = [
    KEY,
    KEY.slice(3),
    KEY.slice(7, 7 + MIN_FRAGMENT_LENGTH),
    b64(KEY),
    b64(`x${KEY}`),
    b64(`xy${KEY}tail`),
    Buffer.from(`z${KEY}`).toString("base64url"),
    encodeURIComponent(`a/${KEY}`),
    JSON.stringify({ QUOTED }),
    "dbpassword123456",
  ];
  for (const copy of copies) {
    const out = redact(`before ${copy} after`);
    assert.match(out, /\[redacted\]/, copy);
    for (let i = 0; i + MIN_FRAGMENT_LENGTH <= KEY.length; i++) {
      assert.ok(!out.includes(KEY.slice(i, i + MIN_FRAGMENT_LENGTH)), `${copy} -> ${out}`);
    }
    assert.ok(!out.includes("dbpassword123456") && !out.includes(QUOTED));
  }
  assert.equal(
    redact(`${KEY.slice(0, 15)} is too short a piece to tell`),
    `${KEY.slice(0, 15)} is too short a piece to tell`,
  );
  assert.equal(
    redact("an ordinary sentence with a task-id, /home/someone and 12345678"),
    "an ordinary sentence with a task-id, /home/someone and 12345678",
  );
  assert.equal(redact(`{"a":"${KEY}"}`), `{"a":"${REDACTED}"}`, "JSON stays JSON");
});

test("a stream is redacted as it passes, a secret split across chunks included", async () => {
  const text = `data: {"t":"${KEY}"}\n\nevent: x\ndata: ${KEY.slice(3)}\n\n`;
  const cuts = [3, 14, 20, 41, 60];
  const chunks = [0, ...cuts].map((c, i, all) => text.slice(c, all[i + 1] ?? text.length));
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk));
      c.close();
    },
  });
  const out = await new Response(body.pipeThrough(redactingStream())).text();
  assert.equal(out, `data: {"t":"${REDACTED}"}\n\nevent: x\ndata: ${REDACTED}\n\n`);
});

test("a very long line is let through in parts, cut between words, never inside a secret", async () => {
  const text = Array.from({ length: 300 }, (_, i) => (i % 37 === 0 ? KEY : `word${i}`)).join(" ");
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < text.length; i += 97) c.enqueue(new TextEncoder().encode(text.slice(i, i + 97)));
      c.close();
    },
  });
  const out = await new Response(body.pipeThrough(redactingStream({ maxHold: 1200 }))).text();
  assert.equal(out, redact(text));
  assert.ok(!out.includes(KEY.slice(3, 3 + MIN_FRAGMENT_LENGTH)));
});

test("the middleware redacts JSON, text, error and SSE responses, and leaves binary ones alone", async () => {
  const app = new Hono();
  app.onError((err, c) => c.json({ detail: err.message }, 502));
  app.use(redactResponses());
  app.get("/json", (c) => c.json({ quoted: `upstream said ${KEY.slice(3)}` }));
  app.get("/text", (c) => c.text(`key ${KEY}`));
  app.get("/fail", () => {
    throw new Error(`upstream refused ${KEY}`);
  });
  app.get("/sse", (c) =>
    streamSSE(c, async (s) => {
      await s.writeSSE({ event: "values", data: JSON.stringify({ k: KEY }) });
      await s.writeSSE({ event: "end", data: "null" });
    }));
  app.get(
    "/bin",
    () => new Response(new TextEncoder().encode(KEY), { headers: { "content-type": "application/octet-stream" } }),
  );
  for (const path of ["/json", "/text", "/fail", "/sse"]) {
    const res = await app.request(path);
    const body = await res.text();
    assert.match(body, /\[redacted\]/, path);
    assert.ok(!body.includes(KEY.slice(3, 3 + MIN_FRAGMENT_LENGTH)), `${path}: ${body}`);
    assert.equal(res.headers.get("content-length"), null, path);
  }
  assert.equal((await app.request("/fail")).status, 502);
  assert.equal(await (await app.request("/bin")).text(), KEY);
});

test("a run's event stream is redacted at its source: its data passes as it is, its event names and errors are redacted", async () => {
  const app = new Hono();
  app.use(redactResponses());
  app.get("/run-stream", () =>
    sseResponse((async function* () {
      yield { id: 1, event: "values", data: redact(JSON.stringify({ k: KEY })) };
      yield { id: 2, event: `updates|${KEY}`, data: "{}" };
      throw new Error(`the log failed: ${KEY}`);
    })()));
  const res = await app.request("/run-stream");
  const body = await res.text();
  assert.equal(res.headers.get(REDACTED_AT_SOURCE), null, "the marker stays inside the server");
  assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
  assert.ok(!body.includes(KEY.slice(3, 3 + MIN_FRAGMENT_LENGTH)), body);
  assert.match(body, /id: 0\nevent: values\ndata: \{"k":"\[redacted\]"\}/);
  assert.match(body, /event: updates\|\[redacted\]/);
  assert.match(body, /event: error\ndata: .*the log failed: \[redacted\]/);
});

test("AUTH in a variable's name makes it secret as a word or as AUTHORIZATION, not inside AUTHORIZED or AUTHOR", () => {
  const v = (name: string) => secretValues({ [name]: "value-long-enough" }).length === 1;
  for (const name of ["BASIC_AUTH", "PROXY_AUTH_HEADER", "GITHUB_OAUTH", "HTTP_AUTHORIZATION", "auth_value"]) {
    assert.ok(v(name), `${name} is secret`);
  }
  for (const name of ["IDENTITY_B_AUTHORIZED_PARTIES", "GIT_AUTHOR_NAME", "AUTHORITY_URL"]) {
    assert.ok(!v(name), `${name} is not secret`);
  }
});

test("publishable keys are public by design: not registered, not shaped like a secret (the chat UI is served them)", () => {
  const pk = "pk_test_Y2xlcmsuZXhhbXBsZS5jb20k";
  const sb = "sb_publishable_abcdefghijklmnopqrstuv";
  assert.deepEqual(secretValues({ IDENTITY_B_PUBLISHABLE_KEY: pk, IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: sb }), []);
  assert.equal(redact(`{"publishable_key":"${pk}","other":"${sb}"}`), `{"publishable_key":"${pk}","other":"${sb}"}`);
  assert.equal(redact("sk_live_abcdefghijklmnopqrstuv sb_secret_abcdefghijklmnopqrstuv"), `${REDACTED} ${REDACTED}`);
});
