/**
 * Shared property-based fuzzing for the HTTP suites (agent server, control plane): a fixed
 * seed so `npm test` is reproducible, a longer mode for nightly CI (`npm run test:fuzz`, which
 * sets `AGENTCLI_FUZZ=long`), hostile arbitraries (NUL, lone surrogates, bad percent-encoding,
 * invalid UTF-8, huge numbers, wrong types) and a raw HTTP/1.1 client that sends exactly the
 * bytes it is given (fetch would normalise or refuse most of them).
 *
 * @example
 * await fc.assert(fc.asyncProperty(hostileJson(), async (body) => {
 *   const res = await rawHttp(port, { method: "POST", target: "/threads", body: JSON.stringify(body) });
 *   assertNot5xx(res, "POST /threads");
 * }), fuzzParams());
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import fc from "fast-check";

/** The seed of every property in `npm test`; `AGENTCLI_FUZZ_SEED` replays another. */
export const FUZZ_SEED = Number(process.env.AGENTCLI_FUZZ_SEED ?? 20261124);

/** True under `npm run test:fuzz` (`AGENTCLI_FUZZ=long`): many more runs, random seed unless one is given. */
export const FUZZ_LONG = process.env.AGENTCLI_FUZZ === "long";

/**
 * Parameters for `fc.assert`: `runs` cases with the fixed seed in `npm test`, 20 times as many
 * under `AGENTCLI_FUZZ=long` (seeded by `AGENTCLI_FUZZ_SEED` or the clock, printed on failure).
 */
export function fuzzParams(runs = 40): fc.Parameters<unknown> {
  const seed = FUZZ_LONG && !process.env.AGENTCLI_FUZZ_SEED ? Date.now() : FUZZ_SEED;
  return { seed, numRuns: FUZZ_LONG ? runs * 20 : runs, endOnFailure: true, verbose: 1, includeErrorInReport: true };
}

/** Strings that break naive handlers: NUL, control characters, lone surrogates, `%` escapes, very long runs. */
export function hostileString(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 24 }),
    fc.string({ unit: "binary", maxLength: 24 }),
    fc.constantFrom(
      "\u0000",
      "a\u0000b",
      "\ud800",
      "x\udfffy",
      "%",
      "%zz",
      "%00",
      "%E0%A4%A",
      "%ff%fe",
      "../..",
      "..%2f..%2f",
      "\r\nX-Injected: 1",
      "null",
      "undefined",
      "NaN",
      "-1",
      "1e400",
      "0x10",
      " ",
      "",
    ),
    fc.tuple(fc.constantFrom("a", "\u0000", "é", "\ud83d\ude00"), fc.integer({ min: 100, max: 5000 })).map(([c, n]) =>
      c.repeat(n)
    ),
  );
}

/** Numbers at the edges: negatives, zero, fractions, 2^31 and beyond, non-finite-looking strings. */
export function hostileNumber(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.integer(),
    fc.double(),
    fc.constantFrom(
      0,
      -1,
      0.5,
      2 ** 31,
      2 ** 31 - 1,
      2_147_484,
      2 ** 53,
      Number.MAX_SAFE_INTEGER,
      1e308,
      -1e308,
      "1",
      "Infinity",
      "NaN",
    ),
  );
}

/** Any JSON value, with hostile strings and numbers mixed in at every depth. */
export function hostileJson(): fc.Arbitrary<unknown> {
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      fc.constant(null),
      fc.boolean(),
      hostileNumber(),
      hostileString(),
      fc.array(tie("value"), { maxLength: 4 }),
      fc.dictionary(hostileString(), tie("value"), { maxKeys: 4 }),
    ),
  }));
  return value;
}

/**
 * An object built on `shape` (field name -> arbitrary of good values): each field is kept,
 * dropped, or replaced by a hostile value, so the handler gets past the first type check.
 */
export function mutatedObject(shape: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.fromEntries(
    Object.entries(shape).map((
      [k, good],
    ) => [
      k,
      fc.option(fc.oneof({ weight: 3, arbitrary: good }, { weight: 2, arbitrary: hostileJson() }), { nil: undefined }),
    ]),
  );
  return fc.record(fields, { requiredKeys: [] }).map((o) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
  );
}

/** A request body: hostile JSON, a mutated object, or raw bytes (invalid UTF-8, truncated JSON, NUL). */
export function hostileBody(shape?: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string | Uint8Array> {
  const arbs: Array<fc.Arbitrary<string | Uint8Array>> = [
    hostileJson().map((v) => JSON.stringify(v) ?? "null"),
    fc.constantFrom(
      "",
      "{",
      "[",
      '{"a":',
      "nul",
      '{"a":1}garbage',
      "\u0000",
      '{"\\u0000":"\\u0000"}',
      '{"a":"\\ud800"}',
    ),
    fc.uint8Array({ maxLength: 64 }),
    fc.constant(Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d])),
  ];
  if (shape) arbs.unshift(mutatedObject(shape).map((v) => JSON.stringify(v)));
  return fc.oneof(...arbs);
}

/** A raw URL path segment: ids, garbage, bad percent-encoding, encoded NUL and slashes. */
export function hostileSegment(good: fc.Arbitrary<string> = fc.uuid()): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: good },
    fc.constantFrom(
      "%",
      "%zz",
      "%00",
      "%E0%A4%A",
      "%ff",
      "%2F",
      "..",
      "%2e%2e",
      "a%00b",
      "x".repeat(3000),
      "-1",
      "null",
    ),
    fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ""))),
  );
}

/** A raw query string (without `?`): valid pairs, bad escapes, repeated keys, NUL. */
export function hostileQuery(keys: string[] = []): fc.Arbitrary<string> {
  const key = keys.length
    ? fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 6 }).map(encodeURIComponent))
    : fc.string({ maxLength: 6 }).map(encodeURIComponent);
  const val = fc.oneof(
    fc.string({ maxLength: 12 }).map((s) => {
      try {
        return encodeURIComponent(s);
      } catch {
        return "x";
      }
    }),
    fc.constantFrom("%", "%zz", "%00", "-1", "1e400", "99999999999999999999", "true", "", "%ff"),
  );
  return fc.array(fc.tuple(key, val), { maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"));
}

/** Fills `{param}` placeholders of an OpenAPI path with the given segments (in order). */
export function fillPath(template: string, segments: string[]): string {
  let i = 0;
  return template.replace(/\{[^}]+\}/g, () => segments[i++] ?? "x");
}

/** The number of `{param}` placeholders in an OpenAPI path. */
export function pathParams(template: string): number {
  return (template.match(/\{[^}]+\}/g) ?? []).length;
}

export interface RawRequest {
  method: string;
  /** The request target exactly as sent (path and query, not validated). */
  target: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Give up (and report status 0) after this long; default 30 s. */
  timeoutMs?: number;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends one HTTP/1.1 request over a fresh TCP connection, byte for byte (no URL parsing, no
 * header validation), and reads the response up to the end of its headers plus whatever body
 * arrives before the server closes or `Content-Length` is reached. Streams (SSE) are read
 * until the first chunk arrives, which is enough to see the status.
 */
export function rawHttp(port: number, req: RawRequest): Promise<RawResponse> {
  const body = typeof req.body === "string" ? Buffer.from(req.body, "utf8") : req.body ? Buffer.from(req.body) : null;
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, connection: "close", ...req.headers };
  if (body && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
    headers["content-type"] = "application/json";
  }
  if (body) headers["content-length"] = String(body.length);
  const head = `${req.method} ${req.target} HTTP/1.1\r\n${
    Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join("\r\n")
  }\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      const raw = Buffer.concat(chunks).toString("latin1");
      const end = raw.indexOf("\r\n\r\n");
      const lines = raw.slice(0, end < 0 ? raw.length : end).split("\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "")?.[1] ?? 0);
      const hs: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(":");
        if (i > 0) hs[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status, headers: hs, body: end < 0 ? "" : Buffer.from(raw.slice(end + 4), "latin1").toString("utf8") });
    };
    const timer = setTimeout(finish, req.timeoutMs ?? 30_000);
    sock.on("connect", () => {
      sock.write(head, "latin1");
      if (body) sock.write(body);
    });
    sock.on("data", (d: Buffer) => {
      chunks.push(d);
      const raw = Buffer.concat(chunks).toString("latin1");
      const end = raw.indexOf("\r\n\r\n");
      if (end < 0) return;
      const len = /\r\ncontent-length:\s*(\d+)/i.exec(raw.slice(0, end))?.[1];
      const streaming = /\r\ncontent-type:\s*text\/event-stream/i.test(raw.slice(0, end));
      if ((len !== undefined && Buffer.byteLength(raw, "latin1") - end - 4 >= Number(len)) || streaming) finish();
    });
    sock.on("end", finish);
    sock.on("close", finish);
    sock.on("error", (err) => (chunks.length ? finish() : (done = true, clearTimeout(timer), reject(err))));
  });
}

/** Fails (with the request and response) when the server answered 5xx or not at all. */
export function assertNot5xx(res: RawResponse, what: string): void {
  assert.ok(
    res.status >= 100 && res.status < 500,
    `${what} answered ${res.status || "nothing"}: ${res.body.slice(0, 500)}`,
  );
}

export { fc };
