/**
 * Semantic store search through the SDK: with `AGENTCLI_STORE_EMBEDDINGS` naming an
 * OpenAI-wire embedding model (the model server's deterministic `/v1/embeddings` stand-in),
 * `putItem(..., { index })` embeds the named fields and `searchItems({ query })` ranks by
 * similarity with a `score`, honouring the filter, also with encryption at rest; an index
 * field not in the value is a 422; `/info` says how `query` works. Without a model, `query`
 * is text matching. Runs on PostgreSQL too (AGENTCLI_TEST_SERVER_ON_POSTGRES=1). The similarity
 * is pgvector's on PGlite (its `vector` extension, always loaded) and on PostgreSQL where
 * pgvector is installed (scripts/test-env.sh builds it for CI), with an HNSW index per
 * dimension; a PostgreSQL role that may not create the extension gets the exact `real[]` scoring.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { storeIndexFromEnv } from "../../core/harness/embeddings.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { encryptionFromEnv } from "../../core/storage/encryption.ts";
import { openSql } from "../../core/storage/sql.ts";
import { nearestVectorsSql, vectorSupport } from "../../core/storage/store-index.ts";
import { EMBEDDING_DIMS } from "../../core/testing/model-server/embeddings.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { pgSchema, startTestServer, type TestServer } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

let models: ModelServer;
before(async () => {
  models = await startModelServer();
});
after(() => models?.close());

async function indexed(env: Record<string, string> = {}) {
  const driver = await loadPlugins(builtinPlugins);
  return storeIndexFromEnv({
    AGENTCLI_STORE_EMBEDDINGS: "openai:text-embedding-3-small",
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: models.openaiBaseUrl,
    ...env,
  }, driver);
}

const onPostgres = process.env.AGENTCLI_TEST_SERVER_ON_POSTGRES === "1";

/** The engine expected: pgvector on PGlite always; on PostgreSQL when pgvector is installed (required in CI). */
async function expectedEngine(t: TestServer): Promise<"pgvector" | "sql"> {
  if (!onPostgres) return "pgvector";
  const { rows } = await sqlOf(t.server.storage).query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  if (process.env.CI) assert.ok(rows.length, "pgvector is installed on CI's PostgreSQL (scripts/test-env.sh)");
  return rows.length ? "pgvector" : "sql";
}

async function putDocs(t: TestServer): Promise<void> {
  await t.client.store.putItem(["docs", "a"], "k1", { text: "the cat sat on the mat", tag: "pets" }, {
    index: ["text"],
  });
  await t.client.store.putItem(["docs", "a"], "k2", { text: "stock market prices fell sharply", tag: "news" }, {
    index: ["text"],
  });
  await t.client.store.putItem(["docs", "b"], "k3", { text: "a cat and a mat", tag: "news" }, { index: false });
  await t.client.store.putItem(["docs", "b"], "k4", {
    title: "x",
    body: { parts: [{ t: "mat cat" }, { t: "dog" }] },
    tag: "pets",
  }, { index: ["body.parts[*].t"] });
}

for (const encrypted of [false, true]) {
  describe(`semantic store search${encrypted ? " with encryption at rest" : ""}`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer({
        storage: {
          storeIndex: await indexed(),
          encryption: encrypted ? encryptionFromEnv({ LANGGRAPH_AES_KEY: "0123456789abcdef" }) : null,
        },
      });
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
      for (const text of ["the cat sat on the mat", "mat cat", "dog"]) {
        assert.ok(models.embedded.includes(text), `"${text}" was embedded`);
      }
      assert.ok(
        !models.embedded.some((x) => x.includes("a cat and a mat")),
        "an item put with index: false is not embedded",
      );
      await assert.rejects(
        t.client.store.putItem(["docs", "a"], "k5", { text: "x" }, { index: ["nope"] }),
        /HTTP 422: .*field \\"nope\\" is not in the item's value/,
      );
      assert.equal(await t.client.store.getItem(["docs", "a"], "k5"), null);
      // Re-indexing replaces an item's vectors: k1 no longer matches on its old text.
      await t.client.store.putItem(["docs", "a"], "k1", { text: "quarterly earnings report", tag: "pets" }, {
        index: ["text"],
      });
      const { items } = await t.client.store.searchItems(["docs"], { query: "cat on the mat" });
      assert.equal(items[0]!.key, "k4");
      await t.client.store.putItem(["docs", "a"], "k1", { text: "the cat sat on the mat", tag: "pets" }, {
        index: ["text"],
      });
    });

    test("/info says query is vector search, with the model and the engine", async () => {
      const info = await (await fetch(`${t.url}/info`)).json() as { store_search: Record<string, unknown> };
      assert.deepEqual(info.store_search, {
        query: "vector",
        model: "openai:text-embedding-3-small",
        engine: await expectedEngine(t),
      });
    });

    test("with pgvector, the embeddings' dimension has an HNSW index and the nearest-vectors scan can use it", async (ctx) => {
      if (await expectedEngine(t) !== "pgvector") return ctx.skip("no pgvector on this PostgreSQL");
      const sql = sqlOf(t.server.storage);
      const { rows } = await sql.query<{ indexdef: string }>(
        "SELECT indexdef FROM pg_indexes WHERE indexname = $1 AND schemaname = current_schema()",
        [`store_vectors_hnsw_${EMBEDDING_DIMS}`],
      );
      assert.match(
        rows[0]?.indexdef ?? "",
        new RegExp(
          `USING hnsw .*vector\\(${EMBEDDING_DIMS}\\).*vector_cosine_ops.*WHERE \\(array_length\\(embedding, 1\\) = ${EMBEDDING_DIMS}\\)`,
        ),
      );
      const support = await vectorSupport(sql);
      const query = `[${new Array(EMBEDDING_DIMS).fill(0).map((_, i) => (i === 0 ? 1 : 0)).join(",")}]`;
      const plan = await sql.transaction(async (tx) => {
        // Four rows: the planner would rather sort them; the index must still be a plan for the search's own statement.
        await tx.query("SET LOCAL enable_seqscan = off");
        const nearest = nearestVectorsSql(support, {
          param: "$3",
          dims: EMBEDDING_DIMS,
          where: ["namespace[1:$2] = $1::text[]"],
          limit: "$4",
        });
        return (await tx.query<{ "QUERY PLAN": string }>(`EXPLAIN ${nearest}`, [["docs"], 1, query, 10])).rows.map((
          r,
        ) => r["QUERY PLAN"]).join("\n");
      });
      assert.match(plan, new RegExp(`Index Scan using store_vectors_hnsw_${EMBEDDING_DIMS}`), plan);
    });
  });
}

// The fallback needs a database without pgvector to its name: on PostgreSQL, a role that may
// not create the extension (pgvector is not a trusted extension) in a database of its own.
if (onPostgres) {
  describe("PostgreSQL without pgvector", () => {
    test("similarity is computed in SQL over real[], ranking as pgvector does, and /info says so", async () => {
      const base = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
      const db = `agentcli_novector_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
      const admin = await openSql({ url: base });
      let t: TestServer | undefined;
      try {
        await admin.query(
          "DO $$ BEGIN CREATE ROLE agentcli_novector LOGIN NOSUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
        );
        await admin.query(`CREATE DATABASE ${db} OWNER agentcli_novector`);
        const url = new URL(base);
        url.username = "agentcli_novector";
        url.pathname = `/${db}`;
        t = await startTestServer({ storage: { url: url.toString(), storeIndex: await indexed() } });
        await putDocs(t);
        const { items } = await t.client.store.searchItems(["docs"], { query: "cat on the mat", limit: 10 });
        assert.deepEqual(items.map((i) => i.key), ["k1", "k4", "k2"]);
        const scores = items.map((i) => (i as { score?: number }).score!);
        assert.ok(scores[0]! > scores[1]! && scores[1]! > scores[2]!, `scores descend: ${scores}`);
        const filtered = await t.client.store.searchItems(["docs"], {
          query: "cat on the mat",
          filter: { tag: "news" },
        });
        assert.deepEqual(filtered.items.map((i) => i.key), ["k2"]);
        const info = await (await fetch(`${t.url}/info`)).json() as { store_search: unknown };
        assert.deepEqual(info.store_search, { query: "vector", model: "openai:text-embedding-3-small", engine: "sql" });
        const { rows } = await sqlOf(t.server.storage).query("SELECT 1 FROM pg_extension WHERE extname = 'vector'");
        assert.equal(rows.length, 0, "the extension was not created");
      } finally {
        await t?.close();
        await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
        await admin.close();
      }
    });
  });
}

describe("pgvector's HNSW index in use", () => {
  test("a filtered search fills its page from beyond the index's first candidates (iterative scan)", async (ctx) => {
    // The index forced for the server's sessions (PGlite has one; PostgreSQL's get it from the URL).
    let schema: Awaited<ReturnType<typeof pgSchema>> | null = null;
    let storage: Record<string, unknown> = {};
    if (onPostgres) {
      schema = await pgSchema("agentcli_hnsw");
      const url = new URL(schema.url);
      url.searchParams.set("options", `${url.searchParams.get("options")} -c enable_seqscan=off`);
      storage = { url: url.toString() };
    }
    const t = await startTestServer({ storage: { ...storage, storeIndex: await indexed() } });
    try {
      if (await expectedEngine(t) !== "pgvector") return ctx.skip("no pgvector on this PostgreSQL");
      if (!onPostgres) await sqlOf(t.server.storage).query("SET enable_seqscan = off");
      // 50 items nearer the query than any of the 5 the filter lets through: more than the
      // 40 candidates (hnsw.ef_search) an HNSW scan yields before it iterates.
      for (let i = 0; i < 50; i++) {
        await t.client.store.putItem(["many"], `near-${i}`, { text: `cat on the mat w${i}`, tag: "pets" }, {
          index: ["text"],
        });
      }
      for (let i = 0; i < 5; i++) {
        await t.client.store.putItem(["many"], `far-${i}`, { text: `the stock market x${i}`, tag: "news" }, {
          index: ["text"],
        });
      }
      const support = await vectorSupport(sqlOf(t.server.storage));
      const { rows } = await sqlOf(t.server.storage).query<{ "QUERY PLAN": string }>(
        `EXPLAIN ${
          nearestVectorsSql(support, {
            param: "$3",
            dims: EMBEDDING_DIMS,
            where: ["namespace[1:$2] = $1::text[]"],
            limit: "$4",
          })
        }`,
        [["many"], 1, `[${new Array(EMBEDDING_DIMS).fill(1).join(",")}]`, 100],
      );
      assert.match(rows.map((r) => r["QUERY PLAN"]).join("\n"), /Index Scan using store_vectors_hnsw_/);
      const { items } = await t.client.store.searchItems(["many"], {
        query: "cat on the mat",
        filter: { tag: "news" },
        limit: 5,
      });
      assert.deepEqual(items.map((i) => i.key).sort(), ["far-0", "far-1", "far-2", "far-3", "far-4"]);
      const scores = items.map((i) => (i as { score?: number }).score!);
      assert.ok(scores.every((s, i) => s > 0 && (i === 0 || s <= scores[i - 1]!)), `scores descend: ${scores}`);
      const top = await t.client.store.searchItems(["many"], { query: "cat on the mat w7", limit: 3 });
      assert.equal(top.items[0]?.key, "near-7");
    } finally {
      await t.close();
      await schema?.drop();
    }
  });
});

describe("default index fields (AGENTCLI_STORE_INDEX_FIELDS)", () => {
  test("a put without index embeds the default fields; an item without them is stored, not ranked", async () => {
    const t = await startTestServer({
      storage: { storeIndex: await indexed({ AGENTCLI_STORE_INDEX_FIELDS: "text" }) },
    });
    try {
      await t.client.store.putItem(["d"], "with", { text: "red apples", other: "zzz" });
      await t.client.store.putItem(["d"], "without", { note: "red apples" });
      assert.equal((await t.client.store.getItem(["d"], "without"))?.value.note, "red apples");
      const { items } = await t.client.store.searchItems(["d"], { query: "red apples" });
      assert.deepEqual(items.map((i) => i.key), ["with"]);
      assert.ok(
        !models.embedded.includes("zzz") && models.embedded.includes("red apples"),
        "only the default field was embedded",
      );
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
    await assert.rejects(
      indexed({ AGENTCLI_STORE_EMBEDDINGS: "nosuch:model" }),
      /AGENTCLI_STORE_EMBEDDINGS="nosuch:model": no model provider plugin handles "nosuch"/,
    );
    await assert.rejects(
      indexed({ AGENTCLI_STORE_EMBEDDINGS: "anthropic:claude" }),
      /the "anthropic" provider serves no embeddings/,
    );
    await assert.rejects(indexed({ AGENTCLI_STORE_EMBEDDINGS: "openai" }), /it is not provider:model/);
    await assert.rejects(indexed({ OPENAI_API_KEY: "" }), /OPENAI_API_KEY is not set/);
  });
});
