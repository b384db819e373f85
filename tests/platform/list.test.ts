import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startTestPlatform, type TestPlatform, until } from "./_harness.ts";

let t: TestPlatform;
const ids: Record<string, string> = {};
const TAG1 = "11111111-1111-4111-8111-111111111111";
const TAG2 = "22222222-2222-4222-8222-222222222222";
let listenerId = "";

before(async () => {
  t = await startTestPlatform();
  listenerId = (await t.call("POST", "/v2/listeners", {
    body: { compute_type: "k8s", compute_id: "list-cluster", compute_config: { k8s_namespaces: ["a"] } },
  })).body.id;
  const specs: Array<[string, Record<string, unknown>]> = [
    ["alpha-one", { source_config: { deployment_type: "prod" }, image_version: "1.0", tag_value_ids: [TAG1] }],
    ["alpha-two", { source_config: { deployment_type: "dev" }, image_version: "2.0", tag_value_ids: [TAG2] }],
    ["beta-one", { source_config: { deployment_type: "prod", listener_id: "LISTENER" }, image_version: "1.0" }],
    ["beta-two", { source_config: { deployment_type: "dev_free" }, tag_value_ids: [TAG1, TAG2] }],
    ["gamma", {}],
  ];
  for (const [name, extra] of specs) {
    const body = JSON.parse(
      JSON.stringify({ name, source: "internal_container", source_revision_config: { image_uri: "a:1" }, ...extra })
        .replace("LISTENER", listenerId),
    );
    const r = await t.call("POST", "/v2/deployments", { body });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    ids[name] = r.body.id;
  }
  await until(
    async () => (await t.call("GET", "/v2/deployments?status=READY&limit=100")).body.resources.length === 5,
    "all READY",
  );
});
after(async () => {
  await t?.close();
});

async function names(query: string): Promise<string[]> {
  const r = await t.call("GET", `/v2/deployments?${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.resources.map((d: { name: string }) => d.name).sort();
}

test("pages through all deployments with limit and the returned offset", async () => {
  const seen: string[] = [];
  let offset = 0;
  let pages = 0;
  for (;;) {
    const r = await t.call("GET", `/v2/deployments?limit=2&offset=${offset}`);
    if (!r.body.resources.length) break;
    assert.ok(r.body.resources.length <= 2);
    seen.push(...r.body.resources.map((d: { name: string }) => d.name));
    assert.equal(r.body.offset, offset + r.body.resources.length);
    offset = r.body.offset;
    pages++;
  }
  assert.equal(pages, 3);
  assert.deepEqual([...seen].sort(), Object.keys(ids).sort());
  assert.equal(new Set(seen).size, 5);
  assert.equal((await t.call("GET", "/v2/deployments")).body.resources.length, 5, "default limit 20");
});

test("each filter, alone and with paging", async () => {
  assert.deepEqual(await names("name_contains=alpha"), ["alpha-one", "alpha-two"]);
  assert.deepEqual(await names("name_contains=ONE"), ["alpha-one", "beta-one"]);
  assert.deepEqual(await names("name_contains=alpha&limit=1&offset=1").then((n) => n.length), 1);
  assert.deepEqual(await names("deployment_type=prod"), ["alpha-one", "beta-one"]);
  assert.deepEqual(await names("deployment_type=dev_free"), ["beta-two"]);
  assert.deepEqual(await names("image_version=1.0"), ["alpha-one", "beta-one"]);
  assert.deepEqual(await names(`tag_value_ids=${TAG1}`), ["alpha-one", "beta-two"]);
  assert.deepEqual(await names(`tag_value_ids=${TAG1},${TAG2}`), ["alpha-one", "alpha-two", "beta-two"]);
  assert.deepEqual(await names(`deployment_ids=${ids.gamma},${ids["alpha-two"]}`), ["alpha-two", "gamma"]);
  assert.deepEqual(await names("remote_reconciled=true"), ["beta-one"]);
  assert.equal((await names("remote_reconciled=false")).length, 4);
  assert.equal((await names("status=READY")).length, 5);
  assert.deepEqual(await names("status=UNUSED,AWAITING_DELETE"), []);
  assert.deepEqual(await names("name_contains=one&deployment_type=prod&image_version=1.0&remote_reconciled=false"), [
    "alpha-one",
  ]);
  const page1 = await t.call("GET", "/v2/deployments?deployment_type=prod&limit=1");
  const page2 = await t.call("GET", `/v2/deployments?deployment_type=prod&limit=1&offset=${page1.body.offset}`);
  const page3 = await t.call("GET", `/v2/deployments?deployment_type=prod&limit=1&offset=${page2.body.offset}`);
  assert.notEqual(page1.body.resources[0].id, page2.body.resources[0].id);
  assert.equal(page3.body.resources.length, 0);
});

test("invalid list parameters are 422 naming the parameter", async () => {
  for (
    const q of [
      "limit=0",
      "limit=101",
      "limit=x",
      "offset=-1",
      "status=NOPE",
      "remote_reconciled=maybe",
      "deployment_type=huge",
      "deployment_ids=nope",
      "tag_value_ids=nope",
    ]
  ) {
    const r = await t.call("GET", `/v2/deployments?${q}`);
    assert.equal(r.status, 422, q);
    assert.deepEqual(r.body.detail[0].loc, ["query", q.split("=")[0]]);
  }
  assert.equal((await t.call("GET", "/v2/deployments?limit=100")).status, 200);
});

/** Every page of `path` (limit 1, following the returned offset), as names or ids. */
async function allPages(path: string, field: "name" | "id" = "name"): Promise<string[]> {
  const seen: string[] = [];
  let offset = 0;
  for (let pages = 0; pages < 50; pages++) {
    const r = await t.call("GET", `${path}${path.includes("?") ? "&" : "?"}limit=1&offset=${offset}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.body.resources.length <= 1);
    if (!r.body.resources.length) return seen;
    assert.equal(r.body.offset, offset + 1);
    seen.push(r.body.resources[0][field]);
    offset = r.body.offset;
  }
  throw new Error(`${path}: more than 50 pages`);
}

test("paging with each filter: one page at a time yields exactly the unpaged result, newest first", async () => {
  const filters = [
    "name_contains=one",
    "status=READY",
    "status=READY,UNUSED",
    "remote_reconciled=true",
    "remote_reconciled=false",
    `tag_value_ids=${TAG1}`,
    `tag_value_ids=${TAG1},${TAG2}`,
    "image_version=1.0",
    "deployment_type=prod",
    "deployment_type=dev",
    `deployment_ids=${ids.gamma},${ids["alpha-two"]},${ids["beta-one"]}`,
    "name_contains=a&deployment_type=prod&remote_reconciled=false",
  ];
  for (const f of filters) {
    const unpaged = (await t.call("GET", `/v2/deployments?${f}&limit=100`)).body.resources.map((d: { name: string }) =>
      d.name
    );
    assert.ok(unpaged.length > 0, `${f} matches something`);
    assert.deepEqual(await allPages(`/v2/deployments?${f}`), unpaged, f);
  }
  const newestFirst = (await t.call("GET", "/v2/deployments?limit=100")).body.resources.map((d: { name: string }) =>
    d.name
  );
  assert.deepEqual(newestFirst, ["gamma", "beta-two", "beta-one", "alpha-two", "alpha-one"]);
});

test("revisions: paging with each filter yields exactly the unpaged result", async () => {
  const id = ids.gamma!;
  for (let i = 2; i <= 4; i++) {
    const p = await t.call("PATCH", `/v2/deployments/${id}`, {
      body: { source_revision_config: { image_uri: `a:${i}` } },
    });
    assert.equal(p.status, 200);
  }
  await until(
    async () =>
      (await t.call("GET", `/v2/deployments/${id}/revisions?status=DEPLOY_FAILED,SKIPPED&limit=100`)).body.resources
        .length === 4,
    "revisions settled",
  );
  for (
    const f of [
      "",
      "status=DEPLOY_FAILED",
      "status=SKIPPED",
      "status=DEPLOY_FAILED,SKIPPED",
      "remote_reconciled=false",
      "status=DEPLOY_FAILED&remote_reconciled=false",
    ]
  ) {
    const unpaged = (await t.call("GET", `/v2/deployments/${id}/revisions?${f}&limit=100`)).body.resources.map((
      r: { id: string },
    ) => r.id);
    // SKIPPED depends on how fast the reconciler took the patches; the others always match.
    if (!f.startsWith("status=SKIPPED")) assert.ok(unpaged.length > 0, `${f} matches something`);
    assert.deepEqual(await allPages(`/v2/deployments/${id}/revisions?${f}`, "id"), unpaged, f);
  }
  assert.deepEqual(await allPages(`/v2/deployments/${id}/revisions?remote_reconciled=true`, "id"), []);
  const remote = await allPages(`/v2/deployments/${ids["beta-one"]}/revisions?remote_reconciled=true`, "id");
  assert.equal(remote.length, 1, "a k8s listener's revisions are remote_reconciled");
});
