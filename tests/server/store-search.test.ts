/**
 * Semantic store search through the SDK: with `AGENTCLI_STORE_EMBEDDINGS` naming an
 * OpenAI-wire embedding model (the model server's deterministic `/v1/embeddings` stand-in),
 * `putItem(..., { index })` embeds the named fields and `searchItems({ query })` ranks by
 * similarity with a `score`, honouring the filter, also with encryption at rest; an index
 * field not in the value is a 422; `/info` says how `query` works. Without a model, `query`
 * is text matching. Runs on PostgreSQL too (AGENTCLI_TEST_SERVER_ON_POSTGRES=1).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { storeIndexFromEnv } from "../../core/harness/embeddings.ts";
import { loadPlugins } from "../../core/plugins.ts";
import { encryptionFromEnv } from "../../core/storage/encryption.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { startModelServer, type ModelServer } from "../fixtures/model-server/server.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

let models: ModelServer;
before(async () => {
  models = await startModelServer();
});
after(() => models?.close());

async function indexed(env: Record<string, string> = {}) {
  const driver = await loadPlugins(builtinPlugins);
  return storeIndexFromEnv({ AGENTCLI_STORE_EMBEDDINGS: "openai:text-embedding-3-small", OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: models.openaiBaseUrl, ...env }, driver);
}

async function putDocs(t: TestServer): Promise<void> {
  await t.client.store.putItem(["docs", "a"], "k1", { text: "the cat sat on the mat", tag: "pets" }, { index: ["text"] });
  await t.client.store.putItem(["docs", "a"], "k2", { text: "stock market prices fell sharply", tag: "news" }, { index: ["text"] });
  await t.client.store.putItem(["docs", "b"], "k3", { text: "a cat and a mat", tag: "news" }, { index: false });
  await t.client.store.putItem(["docs", "b"], "k4", { title: "x", body: { parts: [{ t: "mat cat" }, { t: "dog" }] }, tag: "pets" }, { index: ["body.parts[*].t"] });
}

for (const encrypted of [false, true]) {
  describe(`semantic store search${encrypted ? " with encryption at rest" : ""}`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer({ storage: { storeIndex: await indexed(), encryption: encrypted ? encryptionFromEnv({ LANGGRAPH_AES_KEY: "0123456789abcdef" }) : null } });
      await putDocs(t);
    });
    after(() => t?.close());

    test("query ranks indexed items by similarity, with scores; unindexed items are not ranked", async () => {
      const { items } = await t.client.store.searchItems(["docs"], { query: "cat on the mat", limit: 10 });
      assert.deepEqual(items.map((i) => i.key), ["k1", "k4", "k2"]);
      const scores = items.map((i) => (i as { score?: number }).score!);
      assert.ok(scores.every((s) => typeof s === "number"), "every ranked item has a score");
      assert.ok(scores[0]! > scores[1]! && scores[1]! > scores[2]!, `scores descend: ${scores}`);
      assert.ok(Math.abs(scores[2]!) < 1e-6, "a text sharing no word scores 0");
      const page = await t.client.store.searchItems(["docs"], { query: "cat on the mat", limit: 1, offset: 1 });
      assert.deepEqual(page.items.map((i) => i.key), ["k4"]);
      const filtered = await t.client.store.searchItems(["docs"], { query: "cat on the mat", filter: { tag: "news" } });
      assert.deepEqual(filtered.items.map((i) => i.key), ["k2"]);
      const narrowed = await t.client.store.searchItems(["docs", "b"], { query: "cat" });
      assert.deepEqual(narrowed.items.map((i) => i.key), ["k4"]);
    });

    test("only the named fields are embedded; a field not in the value is a 422 and writes nothing", async () => {
      for (const text of ["the cat sat on the mat", "mat cat", "dog"]) assert.ok(models.embedded.includes(text), `"${text}" was embedded`);
      assert.ok(!models.embedded.some((x) => x.includes("a cat and a mat")), "an item put with index: false is not embedded");
      await assert.rejects(
        t.client.store.putItem(["docs", "a"], "k5", { text: "x" }, { index: ["nope"] }),
        /HTTP 422: .*field \\"nope\\" is not in the item's value/,
      );
      assert.equal(await t.client.store.getItem(["docs", "a"], "k5"), null);
      // Re-indexing replaces an item's vectors: k1 no longer matches on its old text.
      await t.client.store.putItem(["docs", "a"], "k1", { text: "quarterly earnings report", tag: "pets" }, { index: ["text"] });
      const { items } = await t.client.store.searchItems(["docs"], { query: "cat on the mat" });
      assert.equal(items[0]!.key, "k4");
      await t.client.store.putItem(["docs", "a"], "k1", { text: "the cat sat on the mat", tag: "pets" }, { index: ["text"] });
    });

    test("/info says query is vector search, with the model and the engine", async () => {
      const info = await (await fetch(`${t.url}/info`)).json() as { store_search: Record<string, unknown> };
      const { rows } = await t.server.storage.sql.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
      assert.deepEqual(info.store_search, { query: "vector", model: "openai:text-embedding-3-small", engine: rows.length ? "pgvector" : "sql" });
    });
  });
}

describe("default index fields (AGENTCLI_STORE_INDEX_FIELDS)", () => {
  test("a put without index embeds the default fields; an item without them is stored, not ranked", async () => {
    const t = await startTestServer({ storage: { storeIndex: await indexed({ AGENTCLI_STORE_INDEX_FIELDS: "text" }) } });
    try {
      await t.client.store.putItem(["d"], "with", { text: "red apples", other: "zzz" });
      await t.client.store.putItem(["d"], "without", { note: "red apples" });
      assert.equal((await t.client.store.getItem(["d"], "without"))?.value.note, "red apples");
      const { items } = await t.client.store.searchItems(["d"], { query: "red apples" });
      assert.deepEqual(items.map((i) => i.key), ["with"]);
      assert.ok(!models.embedded.includes("zzz") && models.embedded.includes("red apples"), "only the default field was embedded");
    } finally {
      await t.close();
    }
  });
});

describe("store search without an embedding model", () => {
  test("query is text matching and /info says so", async () => {
    const t = await startTestServer();
    try {
      await putDocs(t);
      const { items } = await t.client.store.searchItems(["docs"], { query: "CAT AND" });
      assert.deepEqual(items.map((i) => i.key), ["k3"]);
      const info = await (await fetch(`${t.url}/info`)).json() as { store_search: unknown };
      assert.deepEqual(info.store_search, { query: "text" });
    } finally {
      await t.close();
    }
  });

  test("a bad AGENTCLI_STORE_EMBEDDINGS stops the start naming the variable", async () => {
    await assert.rejects(indexed({ AGENTCLI_STORE_EMBEDDINGS: "nosuch:model" }), /AGENTCLI_STORE_EMBEDDINGS="nosuch:model": no model provider plugin handles "nosuch"/);
    await assert.rejects(indexed({ AGENTCLI_STORE_EMBEDDINGS: "anthropic:claude" }), /the "anthropic" provider serves no embeddings/);
    await assert.rejects(indexed({ AGENTCLI_STORE_EMBEDDINGS: "openai" }), /it is not provider:model/);
    await assert.rejects(indexed({ OPENAI_API_KEY: "" }), /OPENAI_API_KEY is not set/);
  });
});
