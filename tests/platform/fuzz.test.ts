/**
 * Property-based fuzzing of the control plane (issue 16, item 5): every route of the app's
 * own route table, over real HTTP bytes (tests/_fuzz.ts: hostile path segments with bad
 * percent-encoding and NUL, hostile queries, bodies of hostile JSON, mutated schema objects,
 * invalid UTF-8, odd content types and keys) must answer below 500, and never reach the
 * error handler as an unexpected error. A 422 names its field (`loc`). Fixed seed in
 * `npm test`; `npm run test:fuzz` runs 20 times as many cases.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  assertNot5xx,
  fc,
  fillPath,
  fuzzParams,
  hostileBody,
  hostileQuery,
  hostileSegment,
  hostileString,
  rawHttp,
  type RawResponse,
} from "../_fuzz.ts";
import { createIntegration, createToken } from "../../core/platform/store/tenancy.ts";
import { startTestPlatform, type TestPlatform } from "./_harness.ts";

let t: TestPlatform;
let port = 0;
let repoHost: Server;
const unexpected: unknown[] = [];
const ids: Record<string, string> = {};

before(async () => {
  t = await startTestPlatform({ onError: (err) => unexpected.push(err) });
  port = (await t.platform.listen({ port: 0 })).port;
  const d = await t.call("POST", "/v2/deployments", {
    body: {
      name: "fuzz-target",
      source: "internal_container",
      source_revision_config: { image_uri: "registry.example/agent:1" },
    },
  });
  ids.deployment_id = d.body.id;
  ids.revision_id = d.body.latest_revision_id;
  ids.listener_id =
    (await t.call("POST", "/v2/listeners", { body: { compute_type: "k8s", compute_id: "fuzz-cluster" } })).body.id;
  ids.token_id = (await createToken(t.platform.sql, {
    tenantId: t.tenantA,
    ownerUserId: "alice",
    providerId: "repohost",
    label: "fuzz",
  })).id;
  // The integration's host: GitHub's repository listing (`GET /user/repos`), one page of one repository.
  repoHost = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify(
        req.url?.startsWith("/user/repos")
          ? [{
            id: 1,
            name: "agent",
            owner: { login: "fuzz" },
            html_url: "https://example.test/fuzz/agent",
            clone_url: "https://example.test/fuzz/agent.git",
            default_branch: "main",
          }]
          : [],
      ),
    );
  });
  await new Promise<void>((r) => repoHost.listen(0, "127.0.0.1", r));
  const apiUrl = `http://127.0.0.1:${(repoHost.address() as AddressInfo).port}`;
  ids.integration_id =
    (await createIntegration(t.platform.sql, { tenantId: t.tenantA, kind: "repohost", apiUrl, token: "fuzz" })).id;
  ids.name = "starter";
});
after(async () => {
  await t?.close();
  repoHost?.close();
});

/** Good values per body field, so mutated objects get past the first checks into the deeper ones. */
const uuid = fc.uuid();
const SHAPES: Record<string, Record<string, fc.Arbitrary<unknown>>> = {
  "POST /v2/deployments": {
    name: fc.constantFrom("fuzz-a", "fuzz b", "x"),
    source: fc.constantFrom(
      "repohost",
      "external_container",
      "internal_container",
      "internal_source",
      "internal_template",
    ),
    source_config: fc.record({
      deployment_type: fc.constantFrom("dev", "prod", "bogus"),
      custom_url: hostileString(),
      resource_spec: fc.record({ min_scale: fc.integer(), max_scale: fc.integer(), cpu: fc.double() }, {
        requiredKeys: [],
      }),
      template: fc.constantFrom("starter", "research", "nope"),
    }, { requiredKeys: [] }),
    source_revision_config: fc.record({
      image_uri: fc.constantFrom("r/a:1", ""),
      repo_ref: hostileString(),
      source_tarball_path: hostileString(),
    }, { requiredKeys: [] }),
    secrets: fc.array(fc.record({ name: fc.constantFrom("OPENAI_API_KEY", "lower", ""), value: hostileString() }), {
      maxLength: 2,
    }),
    tag_value_ids: fc.array(uuid, { maxLength: 2 }),
  },
  "PATCH /v2/deployments/:deployment_id": {
    revision_source: fc.constantFrom("repohost", "internal_container", "internal_source", null, "bogus"),
    source_config: fc.record({ build_on_push: fc.boolean(), custom_url: hostileString(), listener_id: uuid }, {
      requiredKeys: [],
    }),
    source_revision_config: fc.record({ image_uri: fc.constantFrom("r/a:2", ""), graph_config_path: hostileString() }, {
      requiredKeys: [],
    }),
    secrets: fc.option(
      fc.array(fc.record({ name: fc.constantFrom("A", "b"), value: hostileString() }), { maxLength: 2 }),
    ),
  },
  "POST /v2/listeners": {
    compute_type: fc.constantFrom("k8s", "local", "vm"),
    compute_id: hostileString(),
    compute_config: fc.record({ k8s_namespaces: fc.array(hostileString(), { maxLength: 2 }) }, { requiredKeys: [] }),
    version: hostileString(),
  },
  "PATCH /v2/listeners/:listener_id": {
    version: hostileString(),
    compute_config: fc.record({ k8s_namespaces: fc.array(hostileString(), { maxLength: 2 }) }, { requiredKeys: [] }),
  },
  "PATCH /v2/auth/tokens/:token_id/metadata": {
    provider_account_label: hostileString(),
    is_default: fc.oneof(fc.boolean(), hostileString()),
  },
  "POST /v1/integrations/:integration_id/webhook": {
    ref: fc.constantFrom("refs/heads/main", 5),
    repository: fc.record({ clone_url: hostileString() }, { requiredKeys: [] }),
  },
};

const QUERY_KEYS = [
  "limit",
  "offset",
  "name_contains",
  "status",
  "remote_reconciled",
  "tag_value_ids",
  "image_version",
  "deployment_type",
  "deployment_ids",
  "kind",
  "after",
  "wait",
  "expires",
  "signature",
];

/** The app's own route table (so a new route is fuzzed without editing this file), with `:param`s as `{param}`. */
function routes(): Array<{ method: string; template: string; key: string; params: string[] }> {
  const seen = new Set<string>();
  const out: Array<{ method: string; template: string; key: string; params: string[] }> = [];
  for (const r of t.platform.app.routes) {
    if (r.method === "ALL") continue;
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const params = [...r.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]!);
    out.push({
      method: r.method,
      template: r.path.replace(/:([a-z_]+)/g, "{$1}").replace(/\*$/, "{rest}"),
      key,
      params: r.path.endsWith("*") ? [...params, "rest"] : params,
    });
  }
  return out;
}

function check(res: RawResponse, what: string): void {
  assertNot5xx(res, what);
  if (res.status !== 422) return;
  const detail = (JSON.parse(res.body) as { detail: unknown }).detail;
  if (Array.isArray(detail)) {
    for (const d of detail) {
      assert.ok(
        Array.isArray(d.loc) && d.loc.length > 0 && typeof d.msg === "string",
        `${what}: a 422 names its field: ${res.body}`,
      );
    }
  } else assert.equal(typeof detail, "string", `${what}: ${res.body}`);
}

test("the route table is what this suite expects to cover", () => {
  const keys = routes().map((r) => r.key);
  for (const k of Object.keys(SHAPES)) assert.ok(keys.includes(k), `${k} is a route`);
  assert.ok(keys.length >= 20, keys.join("\n"));
});

test("every route: hostile paths, queries, bodies, content types and keys never answer 5xx", async () => {
  for (const route of routes()) {
    const good = (p: string) => fc.constant(p === "rest" ? "uploads/x.bundle" : ids[p] ?? "x");
    const request = fc.record({
      segments: fc.tuple(...route.params.map((p) => hostileSegment(good(p)))),
      query: hostileQuery(QUERY_KEYS),
      body: fc.option(hostileBody(SHAPES[route.key]), { nil: undefined, freq: 3 }),
      contentType: fc.constantFrom(
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "",
      ),
      key: fc.constantFrom(t.keyA, t.keyA, t.keyB, "", "acp_bogus", "x".repeat(2000)),
      accept: fc.constantFrom("application/json", "text/event-stream", "*/*"),
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const target = `${fillPath(route.template, r.segments as string[])}${r.query ? `?${r.query}` : ""}`;
        const headers: Record<string, string> = { accept: r.accept };
        if (r.key) headers["x-api-key"] = r.key;
        if (r.body !== undefined && r.contentType) headers["content-type"] = r.contentType;
        const res = await rawHttp(port, { method: route.method, target, headers, body: r.body, timeoutMs: 60_000 });
        check(res, `${route.method} ${target}`);
      }),
      fuzzParams(route.method === "GET" ? 25 : 40),
    );
  }
  assert.deepEqual(unexpected.map(String), [], "no request reached the error handler as an unexpected error");
});

test("schema bodies with a valid key: every field mutated, still never 5xx, 422s name the field", async () => {
  for (const [key, shape] of Object.entries(SHAPES)) {
    const [method, path] = key.split(" ") as [string, string];
    const target = path.replace(/:([a-z_]+)/g, (_, p: string) => ids[p] ?? "x");
    await fc.assert(
      fc.asyncProperty(hostileBody(shape), async (body) => {
        const res = await rawHttp(port, { method, target, headers: { "x-api-key": t.keyA }, body, timeoutMs: 60_000 });
        check(res, `${key} ${typeof body === "string" ? body.slice(0, 300) : `<${body.length} bytes>`}`);
      }),
      fuzzParams(60),
    );
  }
  assert.deepEqual(unexpected.map(String), []);
});
