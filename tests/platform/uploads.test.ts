/**
 * Uploads and request bodies are bounded and checked (issue 16, items 2, 4 and 5): an
 * archive is inspected while it streams in (a gzip bomb stops at the unpacked limit), only
 * regular files with safe paths are accepted, and every limit's 413 names the variable that
 * raises it. URLs with bad percent-encoding or NUL, and bodies with invalid UTF-8, are 4xx.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { packTar } from "../../core/bundle/tar.ts";
import { getObject } from "../../core/platform/store/objects.ts";
import { okLatencyDuring } from "../_ok-latency.ts";
import { makeBundle, notABundle, startTestPlatform, type TestPlatform } from "./_harness.ts";

const MiB = 1024 * 1024;
let t: TestPlatform;
before(async () => {
  t = await startTestPlatform({
    limits: { maxBodyBytes: 64 * 1024, maxUploadBytes: 2 * MiB, maxUnpackedBytes: 4 * MiB, maxArchiveEntries: 20 },
  });
});
after(async () => {
  await t?.close();
});

/** A one-entry tar whose header is rewritten: entry type, link name, path, declared size. */
function tarEntry(
  path: string,
  opts: { type?: string; link?: string; data?: Uint8Array; size?: number } = {},
): Uint8Array {
  const data = opts.data ?? new TextEncoder().encode("x");
  const tar = packTar(new Map([["placeholder", data]]));
  const h = tar.subarray(0, 512);
  h.fill(0, 0, 100);
  h.set(new TextEncoder().encode(path).subarray(0, 100), 0);
  if (opts.type) h[156] = opts.type.charCodeAt(0);
  if (opts.link) h.set(new TextEncoder().encode(opts.link), 157);
  if (opts.size !== undefined) h.set(new TextEncoder().encode(opts.size.toString(8).padStart(11, "0")), 124);
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.set(new TextEncoder().encode(sum.toString(8).padStart(6, "0")), 148);
  h[154] = 0;
  return tar;
}

async function uploadUrl(): Promise<{ url: string; objectPath: string; deploymentId: string }> {
  const d = await t.call("POST", "/v2/deployments", {
    body: { name: `up-${Math.random().toString(36).slice(2, 8)}`, source: "internal_source" },
  });
  const u = await t.call("POST", `/v2/deployments/${d.body.id}/upload-url`);
  return { url: u.body.upload_url, objectPath: u.body.object_path, deploymentId: d.body.id };
}

async function put(url: string, body: BodyInit, headers: Record<string, string> = {}) {
  const res = await t.platform.app.request(
    url,
    { method: "PUT", body, headers, ...(body instanceof ReadableStream ? { duplex: "half" } : {}) } as RequestInit,
  );
  return { status: res.status, body: await res.json() };
}

/** A stream of `total` bytes that never exists whole (the body of a client that keeps sending). */
function streamOf(chunk: Uint8Array, total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= total) return c.close();
      sent += chunk.byteLength;
      c.enqueue(chunk);
    },
  });
}

describe("uploads", () => {
  test("a bundle is accepted and stored", async () => {
    const u = await uploadUrl();
    const bundle = await makeBundle();
    const r = await put(u.url, bundle as Uint8Array<ArrayBuffer>);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.size, bundle.byteLength);
    const p = await t.call("PATCH", `/v2/deployments/${u.deploymentId}`, {
      body: { source_revision_config: { source_tarball_path: u.objectPath } },
    });
    assert.equal(p.status, 200, JSON.stringify(p.body));
  });

  test("a gzip bomb stops at the unpacked limit: 413 naming AGENTCLI_PLATFORM_MAX_UNPACKED_MB, nothing stored", async () => {
    const u = await uploadUrl();
    // One entry declaring 64 MiB of zeros: 64 KiB compressed, 16 times the limit unpacked.
    const bomb = gzipSync(
      Buffer.concat([tarEntry("big.bin", { size: 64 * MiB }).subarray(0, 512), Buffer.alloc(64 * MiB)]),
      { level: 9 },
    );
    assert.ok(bomb.byteLength < 2 * MiB);
    const r = await put(u.url, bomb);
    assert.equal(r.status, 413);
    assert.match(r.body.detail, /unpacks to more than 4 MiB \(raise it with AGENTCLI_PLATFORM_MAX_UNPACKED_MB\)/);
    const p = await t.call("PATCH", `/v2/deployments/${u.deploymentId}`, {
      body: { source_revision_config: { source_tarball_path: u.objectPath } },
    });
    assert.equal(p.status, 422, "a refused upload is not a source");
  });

  test("the compressed size is bounded with or without Content-Length: 413 naming AGENTCLI_PLATFORM_MAX_UPLOAD_MB", async () => {
    const u = await uploadUrl();
    const declared = await put(u.url, new Uint8Array(10), { "content-length": String(3 * MiB) });
    assert.equal(declared.status, 413);
    assert.match(declared.body.detail, /AGENTCLI_PLATFORM_MAX_UPLOAD_MB/);
    const streamed = await put(u.url, streamOf(new Uint8Array(64 * 1024).fill(7), 64 * MiB));
    assert.equal(streamed.status, 422, "garbage is refused as soon as it does not gunzip");
    // Incompressible but valid gzip (random bytes stored): over the compressed limit before the unpacked one.
    const noise = new Uint8Array(3 * MiB);
    for (let i = 0; i < noise.length; i += 65536) crypto.getRandomValues(noise.subarray(i, i + 65536));
    const big = gzipSync(Buffer.concat([tarEntry("noise.bin", { size: noise.length }).subarray(0, 512), noise]), {
      level: 0,
    });
    let at = 0;
    const chunked = await put(
      u.url,
      new ReadableStream<Uint8Array>({
        pull(c) {
          if (at >= big.byteLength) return c.close();
          c.enqueue(big.subarray(at, at += 256 * 1024));
        },
      }),
    );
    assert.equal(chunked.status, 413);
    assert.match(chunked.body.detail, /larger than 2 MiB \(raise it with AGENTCLI_PLATFORM_MAX_UPLOAD_MB\)/);
  });

  test("too many entries: 413 naming AGENTCLI_PLATFORM_MAX_ARCHIVE_ENTRIES", async () => {
    const u = await uploadUrl();
    const files = new Map(Array.from({ length: 21 }, (_, i) => [`f${i}.txt`, new Uint8Array([1])] as const));
    const r = await put(u.url, gzipSync(packTar(files)));
    assert.equal(r.status, 413);
    assert.match(r.body.detail, /more than 20 \(raise it with AGENTCLI_PLATFORM_MAX_ARCHIVE_ENTRIES\) entries/);
  });

  const unsafe: Array<[string, Uint8Array, RegExp]> = [
    [
      "a symbolic link",
      tarEntry("AGENTS.md", { type: "2", link: "/etc/passwd", data: new Uint8Array() }),
      /"AGENTS\.md" is a symbolic link to "\/etc\/passwd"/,
    ],
    [
      "a hard link",
      tarEntry("AGENTS.md", { type: "1", link: "../../etc/shadow", data: new Uint8Array() }),
      /is a hard link/,
    ],
    ["a character device", tarEntry("dev/null", { type: "3", data: new Uint8Array() }), /is a character device/],
    ["a block device", tarEntry("dev/sda", { type: "4", data: new Uint8Array() }), /is a block device/],
    ["a FIFO", tarEntry("fifo", { type: "6", data: new Uint8Array() }), /is a FIFO/],
    ["an absolute path", tarEntry("/etc/cron.d/x"), /unsafe path "\/etc\/cron\.d\/x"/],
    ["a .. path", tarEntry("project/../../x"), /unsafe path "project\/\.\.\/\.\.\/x"/],
    [
      "a damaged header",
      (() => {
        const x = tarEntry("a.txt");
        x[0] = 0x62;
        return x;
      })(),
      /checksum/,
    ],
  ];
  for (const [what, tar, message] of unsafe) {
    test(`an archive with ${what} is refused with 422 naming the entry`, async () => {
      const u = await uploadUrl();
      const r = await put(u.url, gzipSync(tar));
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.deepEqual(r.body.detail[0].loc, ["body"]);
      assert.match(r.body.detail[0].msg, message);
    });
  }

  test("a truncated archive or a duplicate entry is refused", async () => {
    const u = await uploadUrl();
    const whole = await makeBundle();
    const { gunzipSync } = await import("node:zlib");
    const tar = gunzipSync(whole);
    const cut = await put(u.url, gzipSync(tar.subarray(0, 700)));
    assert.equal(cut.status, 422);
    assert.match(cut.body.detail[0].msg, /truncated/);
    const twice = await put(u.url, gzipSync(Buffer.concat([tarEntry("a.txt").subarray(0, 1024), tarEntry("a.txt")])));
    assert.equal(twice.status, 422);
    assert.match(twice.body.detail[0].msg, /"a\.txt" appears twice/);
    const notGzip = await put(u.url, new TextEncoder().encode("not a bundle"));
    assert.equal(notGzip.status, 422);
    assert.match(notGzip.body.detail[0].msg, /not a gzip archive/);
  });

  test("an archive that is not a bundle is accepted at upload and fails the build (checked there)", async () => {
    const u = await uploadUrl();
    assert.equal((await put(u.url, notABundle() as Uint8Array<ArrayBuffer>)).status, 200);
  });
});

describe("an upload URL is good for one upload (issue 30, item 4)", () => {
  const stored = async (objectPath: string) => Buffer.from((await getObject(t.platform.sql, objectPath))!.bytes!);

  test("a second PUT to a used URL is 409 naming what to do, and the stored bytes stay", async () => {
    const u = await uploadUrl();
    const first = await makeBundle();
    assert.equal((await put(u.url, first as Uint8Array<ArrayBuffer>)).status, 200);
    const replacement = gzipSync(packTar(new Map([["AGENTS.md", new TextEncoder().encode("replaced")]])));
    const again = await put(u.url, replacement);
    assert.equal(again.status, 409, JSON.stringify(again.body));
    assert.match(
      again.body.detail,
      /this upload URL was already used, and an upload is never replaced; ask for a new one \(POST \/v2\/deployments\/[0-9a-f-]+\/upload-url\)/,
    );
    assert.deepEqual(await stored(u.objectPath), Buffer.from(first));
    const same = await put(u.url, first as Uint8Array<ArrayBuffer>);
    assert.equal(same.status, 409, "even the same bytes: the URL is spent");
  });

  test("a replay after a deployment used the upload cannot change what its next revision is built from", async () => {
    const u = await uploadUrl();
    const bundle = await makeBundle();
    assert.equal((await put(u.url, bundle as Uint8Array<ArrayBuffer>)).status, 200);
    const p = await t.call("PATCH", `/v2/deployments/${u.deploymentId}`, {
      body: { source_revision_config: { source_tarball_path: u.objectPath } },
    });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    // The reported attack: no API key, only the URL, then a secrets patch makes a revision from the same path.
    const replay = await put(u.url, notABundle() as Uint8Array<ArrayBuffer>);
    assert.equal(replay.status, 409);
    const patched = await t.call("PATCH", `/v2/deployments/${u.deploymentId}`, {
      body: { secrets: [{ name: "A", value: "b" }] },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const r = await t.call("GET", `/v2/deployments/${u.deploymentId}/revisions/${patched.body.latest_revision_id}`);
    assert.equal(r.body.source_revision_config.source_tarball_path, u.objectPath);
    assert.deepEqual(await stored(u.objectPath), Buffer.from(bundle));
  });

  test("two PUTs racing on one URL: exactly one is stored, the other is 409", async () => {
    const u = await uploadUrl();
    const a = await makeBundle();
    const b = gzipSync(packTar(new Map([["AGENTS.md", new TextEncoder().encode("other")]])));
    const results = await Promise.all([put(u.url, a as Uint8Array<ArrayBuffer>), put(u.url, b)]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409], JSON.stringify(results));
    const winner = results[0]!.status === 200 ? a : b;
    assert.deepEqual(await stored(u.objectPath), Buffer.from(winner));
  });

  test("a refused upload stores nothing and leaves the URL usable", async () => {
    const u = await uploadUrl();
    assert.equal((await put(u.url, new TextEncoder().encode("not a bundle"))).status, 422);
    assert.equal((await put(u.url, (await makeBundle()) as Uint8Array<ArrayBuffer>)).status, 200);
  });
});

describe("a maximal upload does not stall other requests", () => {
  test("/ok keeps being answered while an upload at the limit is received, checked and stored", async () => {
    const { url: base } = await t.platform.listen({ port: 0 });
    const u = await uploadUrl();
    // Incompressible, just under the 2 MiB compressed limit (and the 4 MiB unpacked one).
    const noise = new Uint8Array(2 * MiB - 4096);
    for (let i = 0; i < noise.length; i += 65536) crypto.getRandomValues(noise.subarray(i, i + 65536));
    const archive = gzipSync(packTar(new Map([["noise.bin", noise]])), { level: 0 });
    assert.ok(archive.byteLength <= 2 * MiB, String(archive.byteLength));
    const target = new URL(u.url);
    const { result: res, took, during, worst, idleMedian } = await okLatencyDuring(
      base,
      () => fetch(`${base}${target.pathname}${target.search}`, { method: "PUT", body: archive }),
    );
    assert.equal(res.status, 200, await res.text());
    console.log(
      `# /ok idle median ${idleMedian.toFixed(1)} ms; during a ${
        took.toFixed(0)
      } ms maximal upload: ${during.length} pings, worst ${worst.toFixed(1)} ms`,
    );
    assert.ok(during.length >= 2, `only ${during.length} pings were answered during the upload`);
    assert.ok(worst < took * 0.9, `/ok waited ${worst.toFixed(0)} ms during a ${took.toFixed(0)} ms upload`);
  });
});

describe("request bodies and URLs", () => {
  test("a JSON body over the limit is 413 naming AGENTCLI_PLATFORM_MAX_BODY_MB, declared or streamed", async () => {
    const big = JSON.stringify({
      name: "x",
      source: "internal_container",
      secrets: [{ name: "A", value: "v".repeat(100 * 1024) }],
    });
    const declared = await t.call("POST", "/v2/deployments", { raw: big });
    assert.equal(declared.status, 413);
    assert.match(declared.body.detail, /larger than 0\.06 MiB \(raise it with AGENTCLI_PLATFORM_MAX_BODY_MB\)/);
    const res = await t.platform.app.request("/v2/deployments", {
      method: "POST",
      headers: { "x-api-key": t.keyA, "content-type": "application/json" },
      body: streamOf(new TextEncoder().encode(" ".repeat(16 * 1024)), 60 * MiB),
      duplex: "half",
    } as RequestInit);
    assert.equal(res.status, 413);
    assert.match((await res.json()).detail, /AGENTCLI_PLATFORM_MAX_BODY_MB/);
  });

  test("invalid UTF-8 in a body is 422", async () => {
    const res = await t.platform.app.request("/v2/deployments", {
      method: "POST",
      headers: { "x-api-key": t.keyA, "content-type": "application/json" },
      body: new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    });
    assert.equal(res.status, 422);
    assert.deepEqual((await res.json()).detail[0].loc, ["body"]);
  });

  test("NUL, unpaired surrogates and bad percent-encoding are 4xx naming the part (the reported 500s)", async () => {
    const d = await t.call("POST", "/v2/deployments", {
      body: { name: "enc-1", source: "internal_container", source_revision_config: { image_uri: "r/a:1" } },
    });
    const id = d.body.id;
    const u = await uploadUrl();
    const cases: Array<[string, string, unknown, string]> = [
      ["GET", "/v2/deployments?name_contains=%00", undefined, "query.name_contains"],
      ["GET", "/v2/deployments?image_version=%00", undefined, "query.image_version"],
      ["GET", "/v2/deployments?name_contains=%ED%A0%80", undefined, "query.name_contains"],
      ["PATCH", "/v2/auth/tokens/%00/metadata", {}, "path"],
      ["GET", "/v2/deployments/%00", undefined, "path"],
      ["GET", "/v2/deployments/%E0%A4%A", undefined, "path"],
      ["PUT", u.url.replace("/v2/uploads/", "/v2/uploads/%ZZ"), undefined, "path"],
      ["POST", "/v2/deployments", {
        name: "ok",
        source: "internal_container",
        source_revision_config: { image_uri: "r/a\u0000:1" },
      }, "body.source_revision_config.image_uri"],
      ["POST", "/v2/deployments", {
        name: "ok2",
        source: "internal_container",
        source_revision_config: { image_uri: "r/a:1" },
        secrets: [{ name: "A", value: "\u0000" }],
      }, "body.secrets.0.value"],
      ["POST", "/v2/deployments", {
        name: "ok3",
        source: "internal_container",
        source_revision_config: { image_uri: "r/a:1" },
        secrets: [{ name: "A", value: "\ud800" }],
      }, "body.secrets.0.value"],
      ["PATCH", `/v2/deployments/${id}`, { source_config: { custom_url: "\u0000" } }, "body.source_config.custom_url"],
      ["POST", "/v2/listeners", { compute_type: "k8s", compute_id: "a\u0000" }, "body.compute_id"],
      ["POST", "/v2/listeners", { compute_type: "k8s", compute_id: "b", version: "\u0000" }, "body.version"],
      ["POST", "/v2/deployments", { name: "ok4", source: "internal_container", "k\u0000": 1 }, "body"],
      ["GET", "/v2/deployments?offset=99999999999999999999", undefined, "query.offset"],
      [
        "GET",
        `/v2/deployments/${id}/revisions/${d.body.latest_revision_id}/logs?after=99999999999999999999`,
        undefined,
        "query.after",
      ],
    ];
    for (const [method, path, body, loc] of cases) {
      const r = await t.call(method, path, body === undefined ? {} : { body });
      assert.equal(r.status, 422, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.detail[0].loc.join("."), loc, `${method} ${path}`);
    }
  });
});
