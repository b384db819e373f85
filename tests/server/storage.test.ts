/**
 * The storage suite, run on both engines: embedded PGlite and PostgreSQL
 * (`AGENTCLI_TEST_DATABASE_URL`, default postgres://postgres@127.0.0.1:5432/test, in a
 * schema of its own). Migrations, threads, the run queue's claim rules, the stream log,
 * the LangGraph checkpointer (through a real graph) and the LangGraph store.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { JsonPlusSerializer, MemorySaver } from "@langchain/langgraph-checkpoint";
import { SqlCheckpointSaver } from "../../core/storage/checkpointer.ts";
import { SERVER_MIGRATIONS } from "../../core/storage/migrations.ts";
import { migrate, openSql, type SqlDriver, type SqlExecutor } from "../../core/storage/sql.ts";
import { createStorage, type Storage } from "../../core/storage/storage.ts";
import { graph as interruptGraph } from "../fixtures/graphs/interrupt.ts";
import { sqlOf } from "../../core/storage/storage.ts";

const PG_URL = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

interface Engine {
  name: string;
  open(): Promise<SqlDriver>;
  cleanup(): Promise<void>;
  /** A new, empty database (dropped by `dropFresh`). */
  fresh(): Promise<SqlDriver>;
  dropFresh?(): Promise<void>;
}

const schema = `agentcli_test_${process.pid}_${Date.now()}`;
const engines: Engine[] = [
  { name: "pglite", open: () => openSql(), cleanup: async () => {}, fresh: () => openSql() },
  {
    name: "postgres",
    open: async () => {
      const admin = await openSql({ url: PG_URL });
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await admin.close();
      return openSql({
        url: `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      });
    },
    cleanup: async () => {
      const admin = await openSql({ url: PG_URL });
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.close();
    },
    fresh: async () => {
      const admin = await openSql({ url: PG_URL });
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}_fresh`);
      await admin.close();
      return openSql({
        url: `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}options=${
          encodeURIComponent(`-c search_path=${schema}_fresh`)
        }`,
      });
    },
    dropFresh: async () => {
      const admin = await openSql({ url: PG_URL });
      await admin.query(`DROP SCHEMA IF EXISTS ${schema}_fresh CASCADE`);
      await admin.close();
    },
  },
];

for (const engine of engines) {
  describe(`storage on ${engine.name}`, () => {
    let storage: Storage;
    before(async () => {
      storage = await createStorage(await engine.open());
    });
    after(async () => {
      await storage?.close();
      await engine.cleanup();
    });

    test("migrations are idempotent", async () => {
      await createStorage(sqlOf(storage));
      const { rows } = await sqlOf(storage).query<{ n: string }>(
        "SELECT count(*) AS n FROM agentcli_migrations WHERE scope = 'server'",
      );
      assert.equal(Number(rows[0]!.n), SERVER_MIGRATIONS.length);
    });

    test("threads: create once, scoped get, metadata search, patch merges", async () => {
      const id = crypto.randomUUID();
      assert.ok(await storage.threads.create({ thread_id: id, metadata: { owner: "u1", k: "v" } }));
      assert.equal(await storage.threads.create({ thread_id: id, metadata: {} }), null);
      assert.equal(await storage.threads.get(id, { owner: "u2" }), null);
      assert.equal((await storage.threads.get(id, { owner: "u1" }))?.thread_id, id);
      assert.equal((await storage.threads.search({ metadata: { k: "v" }, limit: 10, offset: 0 })).length, 1);
      const p = await storage.threads.patch(id, { x: 1 });
      assert.deepEqual(p?.metadata, { owner: "u1", k: "v", x: 1 });
    });

    test("runs: one running per thread, pending claimed in order, orphans recovered", async () => {
      const tid = crypto.randomUUID();
      await storage.threads.create({ thread_id: tid, metadata: {} });
      const mk = (id: string) =>
        storage.runs.insert({
          run_id: id,
          thread_id: tid,
          assistant_id: "a",
          metadata: {},
          kwargs: {},
          multitask_strategy: "enqueue",
        });
      const a = crypto.randomUUID(), b = crypto.randomUUID();
      await mk(a);
      await mk(b);
      assert.equal(await storage.runs.claim(b), null, "a later run of a thread cannot jump the queue");
      assert.equal((await storage.runs.claim())?.run_id, a);
      assert.equal(await storage.runs.claim(), null, "one running run per thread");
      await storage.runs.setStatus(a, "success", { fromStatuses: ["running"] });
      const claimed = await storage.runs.claim();
      assert.equal(claimed?.run_id, b);
      assert.equal(claimed?.attempt, 1);
      const orphans = await storage.runs.recoverOrphans(true);
      assert.deepEqual(orphans.map((r) => r.run_id), [b]);
      assert.equal((await storage.runs.get(b))?.status, "error");
    });

    test("a claim reads the thread's metadata with the run (keys sealed at rest opened), so the executor need not", async () => {
      const { encryptionFromEnv } = await import("../../core/storage/encryption.ts");
      const sealed = await createStorage(sqlOf(storage), {
        encryption: encryptionFromEnv({
          LANGGRAPH_AES_KEY: "0123456789abcdef0123456789abcdef",
          LANGGRAPH_AES_JSON_KEYS: "secret_note",
        }),
      });
      const tid = crypto.randomUUID();
      const metadata = { secret_note: "hidden", visible: "yes" };
      await sealed.threads.create({ thread_id: tid, metadata });
      const rid = crypto.randomUUID();
      await sealed.runs.insert({
        run_id: rid,
        thread_id: tid,
        assistant_id: "a",
        metadata: {},
        kwargs: {},
        multitask_strategy: "enqueue",
      });
      const { rows } = await sqlOf(storage).query<{ m: string }>(
        "SELECT metadata->>'secret_note' AS m FROM threads WHERE thread_id = $1",
        [tid],
      );
      assert.notEqual(rows[0]!.m, "hidden", "the key is sealed in the row");
      const claimed = await sealed.runs.claim(rid);
      assert.equal(claimed?.run_id, rid);
      assert.deepEqual(claimed?.threadMetadata, metadata);
      await sealed.runs.setStatus(rid, "success", { fromStatuses: ["running"] });
    });

    test("a run claimed (or inserted claimed) says whether its thread has a checkpoint; the graph's first read of one is then skipped, once", async () => {
      const { emptyCheckpoint } = await import("@langchain/langgraph-checkpoint");
      const tid = crypto.randomUUID();
      await storage.threads.create({ thread_id: tid, metadata: {} });
      const input = (id: string) => ({
        run_id: id,
        thread_id: tid,
        assistant_id: "a",
        metadata: {},
        kwargs: {},
        multitask_strategy: "enqueue" as const,
      });
      // Inserted claimed on a thread with no checkpoint.
      const r1 = crypto.randomUUID();
      const created = await storage.runs.createOnThread(input(r1), { owner: null, claim: true, threadPatch: {} });
      assert.equal(created.run?.status, "running");
      assert.equal(created.threadEmpty, true);
      let queries = 0;
      const counting: SqlExecutor = { query: (text, params) => (queries++, sqlOf(storage).query(text, params)) };
      const saver = new SqlCheckpointSaver(counting);
      saver.expectEmpty(r1, tid);
      const runConfig = { configurable: { thread_id: tid, checkpoint_ns: "", run_id: r1 } };
      assert.equal(
        await saver.getTuple({ configurable: { thread_id: tid, checkpoint_ns: "", run_id: "another run" } }),
        undefined,
      );
      assert.equal(queries, 1, "another run's read queries");
      queries = 0;
      assert.equal(await saver.getTuple(runConfig), undefined);
      assert.equal(queries, 0, "the run's first read answers without a query");
      const cp = { ...emptyCheckpoint(), id: crypto.randomUUID() };
      await saver.put(runConfig, cp, { source: "input", step: -1, parents: {} }, {});
      assert.equal((await saver.getTuple(runConfig))?.checkpoint.id, cp.id, "later reads query");
      await storage.runs.setStatus(r1, "success", { fromStatuses: ["running"] });
      // The thread has a checkpoint now: neither way of claiming says it is empty.
      const r2 = crypto.randomUUID();
      const again = await storage.runs.createOnThread(input(r2), { owner: null, claim: true, threadPatch: {} });
      assert.equal(again.run?.status, "running");
      assert.equal(again.threadEmpty, undefined);
      await storage.runs.setStatus(r2, "success", { fromStatuses: ["running"] });
      const r3 = crypto.randomUUID();
      await storage.runs.insert(input(r3));
      const claimed = await storage.runs.claim(r3);
      assert.equal(claimed?.run_id, r3);
      assert.equal(claimed?.threadEmpty, undefined);
      await storage.runs.setStatus(r3, "success", { fromStatuses: ["running"] });
      // A queued run on a thread without one: its claim says so.
      const other = crypto.randomUUID();
      await storage.threads.create({ thread_id: other, metadata: {} });
      const r4 = crypto.randomUUID();
      await storage.runs.insert({ ...input(r4), thread_id: other });
      assert.equal((await storage.runs.claim(r4))?.threadEmpty, true);
      await storage.runs.setStatus(r4, "success", { fromStatuses: ["running"] });
      await saver.deleteThread(tid);
    });

    test("run events: append in batches, read after an id", async () => {
      const rid = crypto.randomUUID();
      await storage.events.append(rid, [{ id: 1, event: "metadata", data: "{}" }, {
        id: 2,
        event: "values",
        data: '{"a":1}',
      }]);
      await storage.events.append(rid, [{ id: 3, event: "values", data: '{"a":2}' }]);
      assert.deepEqual((await storage.events.read(rid, 1)).map((e) => e.id), [2, 3]);
    });

    test("checkpointer: a graph interrupts, state survives, resume continues, history lists", async () => {
      const { Command } = await import("@langchain/langgraph");
      interruptGraph.checkpointer = storage.checkpointer;
      const config = { configurable: { thread_id: crypto.randomUUID() } };
      await interruptGraph.invoke({ question: "q" }, config);
      const st = await interruptGraph.getState(config);
      assert.deepEqual(st.next, ["ask"]);
      assert.equal(st.tasks[0]!.interrupts.length, 1);
      const out = await interruptGraph.invoke(new Command({ resume: "y" }), config);
      assert.deepEqual(out.log, ["asked", "done:y"]);
      const history = [];
      for await (const s of interruptGraph.getStateHistory(config)) history.push(s);
      assert.ok(history.length >= 4);
      const filtered = [];
      for await (const s of storage.checkpointer.list(config, { filter: { source: "input" } })) filtered.push(s);
      assert.ok(filtered.length >= 1 && filtered.every((s) => s.metadata?.source === "input"));
      await storage.checkpointer.deleteThread(config.configurable.thread_id);
      assert.equal(await storage.checkpointer.getTuple(config), undefined);
    });

    test("checkpointer: a step stores only the channels it changed, once per version; forks keep both branches", async () => {
      const { Annotation, StateGraph } = await import("@langchain/langgraph");
      const State = Annotation.Root({
        big: Annotation<string>(),
        log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
      });
      const graph = new StateGraph(State)
        .addNode("a", () => ({ log: ["a"] }))
        .addNode("b", () => ({ log: ["b"] }))
        .addEdge("__start__", "a").addEdge("a", "b")
        .compile({ checkpointer: storage.checkpointer });
      const thread = crypto.randomUUID();
      const config = { configurable: { thread_id: thread } };
      await graph.invoke({ big: "x".repeat(10_000) }, config);
      await storage.checkpointer.flush();
      // `big` is written by the input only: one stored value however many checkpoints follow.
      const { rows } = await sqlOf(storage).query<{ channel: string; n: string }>(
        "SELECT channel, count(*) AS n FROM checkpoint_blobs WHERE thread_id = $1 GROUP BY channel",
        [thread],
      );
      assert.equal(Number(rows.find((r) => r.channel === "big")!.n), 1);
      const { rows: cps } = await sqlOf(storage).query<{ n: string; max: number }>(
        "SELECT count(*) AS n, max(octet_length(checkpoint)) AS max FROM checkpoints WHERE thread_id = $1",
        [thread],
      );
      assert.ok(Number(cps[0]!.n) >= 3 && Number(cps[0]!.max) < 2_000, JSON.stringify(cps));
      // A fork from the first checkpoint after the input: the new branch's values get versions
      // of their own, and the old branch still reads what it had.
      const history = [];
      for await (const st of graph.getStateHistory(config)) history.push(st);
      const afterA = history.find((st) => st.values.log?.length === 1)!;
      const forked = await graph.updateState(afterA.config, { log: ["fork"] });
      await graph.invoke(null, forked);
      assert.deepEqual((await graph.getState(config)).values.log, ["a", "fork", "b"]);
      const final = history[0]!;
      assert.deepEqual((await graph.getState(final.config)).values.log, ["a", "b"]);
      assert.equal((await graph.getState(final.config)).values.big.length, 10_000);
      const copy = crypto.randomUUID();
      await storage.checkpointer.copyThread(thread, copy);
      assert.deepEqual(
        (await graph.getState({ configurable: { thread_id: copy } })).values,
        (await graph.getState(config)).values,
      );
      await storage.checkpointer.deleteThread(copy);
      await storage.checkpointer.deleteThread(thread);
      const { rows: left } = await sqlOf(storage).query("SELECT 1 FROM checkpoint_blobs WHERE thread_id = $1", [
        thread,
      ]);
      assert.equal(left.length, 0);
    });

    test("checkpointer: state history reads a page in one query", async () => {
      const { Command } = await import("@langchain/langgraph");
      let queries = 0;
      const counting: SqlExecutor = { query: (text, params) => (queries++, sqlOf(storage).query(text, params)) };
      const saver = new SqlCheckpointSaver(counting);
      interruptGraph.checkpointer = saver;
      const config = { configurable: { thread_id: crypto.randomUUID() } };
      for (let i = 0; i < 4; i++) {
        await interruptGraph.invoke({ question: `q${i}` }, config);
        await interruptGraph.invoke(new Command({ resume: "y" }), config);
      }
      interruptGraph.checkpointer = storage.checkpointer;
      await saver.flush();
      queries = 0;
      const page = [];
      for await (const t of saver.list(config, { limit: 10 })) page.push(t);
      assert.equal(page.length, 10);
      assert.equal(queries, 1);
      queries = 0;
      assert.ok(await saver.getTuple(config));
      assert.equal(queries, 1);
      await saver.deleteThread(config.configurable.thread_id);
    });

    test("checkpointer: flushWith writes the pending checkpoints inside the caller's statement; a failed one keeps them for the next flush", async () => {
      const { emptyCheckpoint } = await import("@langchain/langgraph-checkpoint");
      let queries = 0;
      const counting: SqlExecutor = { query: (text, params) => (queries++, sqlOf(storage).query(text, params)) };
      const saver = new SqlCheckpointSaver(counting);
      const config = { configurable: { thread_id: crypto.randomUUID(), checkpoint_ns: "" } };
      const first = { ...emptyCheckpoint(), id: crypto.randomUUID() };
      await saver.put(config, first, { source: "input", step: -1, parents: {} }, {});
      queries = 0;
      const marker = crypto.randomUUID();
      await saver.flushWith(async (batch) => {
        assert.ok(batch, "a batch is pending");
        const params: unknown[] = [marker];
        const parts = batch(params);
        // The caller's own statement ($1 is its parameter), with the batch as CTEs after it.
        await sqlOf(storage).query(
          `WITH ${parts.map((p, i) => `w${i} AS (${p})`).join(", ")} SELECT $1::text AS marker`,
          params,
        );
      });
      assert.equal(queries, 0, "the saver ran no statement of its own");
      assert.equal((await saver.getTuple(config))?.checkpoint.id, first.id);
      const second = { ...emptyCheckpoint(), id: crypto.randomUUID() };
      await saver.put(config, second, { source: "loop", step: 0, parents: {} }, {});
      await assert.rejects(
        saver.flushWith(async (batch) => {
          batch!([]);
          throw new Error("the caller's statement failed");
        }),
        /the caller's statement failed/,
      );
      queries = 0;
      await saver.flush();
      assert.equal(queries, 1, "kept, and written by the next flush");
      assert.equal(
        (await saver.getTuple({ configurable: { ...config.configurable, checkpoint_id: second.id } }))?.checkpoint.id,
        second.id,
      );
      await saver.flushWith(async (batch) => assert.equal(batch, null, "nothing pending"));
      await saver.deleteThread(config.configurable.thread_id);
    });

    test("checkpointer: checkpoints written before checkpoint_blobs stay readable and their threads go on", async () => {
      const sql = await engine.fresh();
      try {
        await migrate(sql, "server", SERVER_MIGRATIONS.filter((m) => m.name !== "checkpoint blobs"));
        // What the saver wrote before: the whole checkpoint (values included) in one row.
        const memory = new MemorySaver();
        interruptGraph.checkpointer = memory;
        const thread = crypto.randomUUID();
        const config = { configurable: { thread_id: thread } };
        await interruptGraph.invoke({ question: "old" }, config);
        const serde = new JsonPlusSerializer();
        for await (const t of memory.list(config)) {
          const c = t.config.configurable!;
          const [type, bytes] = await serde.dumpsTyped(t.checkpoint);
          const [, meta] = await serde.dumpsTyped(t.metadata);
          await sql.query(
            `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, metadata_json)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)`,
            [
              thread,
              c.checkpoint_ns ?? "",
              c.checkpoint_id,
              t.parentConfig?.configurable?.checkpoint_id ?? null,
              type,
              bytes,
              meta,
              new TextDecoder().decode(meta),
            ],
          );
          for (const [i, [taskId, channel, value]] of (t.pendingWrites ?? []).entries()) {
            const [wt, wb] = await serde.dumpsTyped(value);
            await sql.query(
              "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
              [
                thread,
                c.checkpoint_ns ?? "",
                c.checkpoint_id,
                taskId,
                channel === "__interrupt__" ? -3 : i,
                channel,
                wt,
                wb,
              ],
            );
          }
        }
        const upgraded = await createStorage(sql);
        interruptGraph.checkpointer = upgraded.checkpointer;
        const st = await interruptGraph.getState(config);
        assert.equal(st.values.question, "old");
        assert.deepEqual(st.next, ["ask"]);
        const { Command } = await import("@langchain/langgraph");
        const out = await interruptGraph.invoke(new Command({ resume: "y" }), config);
        assert.deepEqual(out.log, ["asked", "done:y"]);
        assert.equal(out.question, "old");
        await upgraded.checkpointer.flush();
      } finally {
        interruptGraph.checkpointer = storage.checkpointer;
        await sql.close();
        await engine.dropFresh?.();
      }
    });

    test("store: put/get/delete, search with filters and query, namespaces", async () => {
      const s = storage.store;
      await s.put(["u", "a"], "1", { kind: "x", n: 1, text: "Hello World" });
      await s.put(["u", "b"], "2", { kind: "y", n: 3 });
      await s.put(["v"], "3", { kind: "x", n: 5 });
      assert.equal((await s.get(["u", "a"], "1"))?.value.n, 1);
      assert.deepEqual((await s.search(["u"])).map((i) => i.key).sort(), ["1", "2"]);
      assert.deepEqual((await s.search([], { filter: { kind: "x" } })).map((i) => i.key).sort(), ["1", "3"]);
      assert.deepEqual((await s.search([], { filter: { n: { $gte: 3 } } })).map((i) => i.key).sort(), ["2", "3"]);
      assert.deepEqual((await s.search([], { filter: { kind: { $ne: "x" } } })).map((i) => i.key), ["2"]);
      assert.deepEqual((await s.search([], { query: "hello" })).map((i) => i.key), ["1"]);
      assert.deepEqual(await s.listNamespaces({ prefix: ["u"] }), [["u", "a"], ["u", "b"]]);
      assert.deepEqual(await s.listNamespaces({ suffix: ["b"] }), [["u", "b"]]);
      assert.deepEqual(await s.listNamespaces({ maxDepth: 1 }), [["u"], ["v"]]);
      await s.delete(["u", "a"], "1");
      assert.equal(await s.get(["u", "a"], "1"), null);
    });
  });
}

test("StatementNames: a statement is named the second time it is seen, DDL never, at most MAX texts, and a text can be unnamed for good", async () => {
  const { StatementNames } = await import("../../core/storage/sql.ts");
  const names = new StatementNames();
  const q = "SELECT * FROM runs WHERE run_id = $1";
  assert.equal(names.nameOf(q), undefined, "seen once: unnamed");
  const name = names.nameOf(q);
  assert.ok(name);
  assert.equal(names.nameOf(q), name, "the same name from then on");
  assert.equal(names.nameOf("CREATE TABLE t (a int)"), undefined);
  assert.equal(names.nameOf("CREATE TABLE t (a int)"), undefined);
  names.unname(q);
  assert.equal(names.nameOf(q), undefined);
  for (let i = 0; i < StatementNames.MAX + 10; i++) {
    names.nameOf(`SELECT ${i}`);
    names.nameOf(`SELECT ${i}`);
  }
  assert.equal(names.nameOf("SELECT 'one more'"), undefined);
  assert.equal(names.nameOf("SELECT 'one more'"), undefined, "past MAX names, texts go unnamed");
});

test("postgres: statements are prepared by name unless told not to (AGENTCLI_PG_PREPARED_STATEMENTS=0 for poolers that cannot keep them)", async () => {
  for (const prepare of [true, false]) {
    const sql = await openSql({ url: PG_URL, poolSize: 1, prepare });
    try {
      for (let i = 0; i < 3; i++) await sql.query("SELECT $1::int + 1 AS n", [i]);
      const { rows } = await sql.query<{ name: string }>(
        "SELECT name FROM pg_prepared_statements WHERE statement LIKE 'SELECT $1::int + 1%'",
      );
      assert.equal(rows.length, prepare ? 1 : 0, `prepare: ${prepare}`);
    } finally {
      await sql.close();
    }
  }
  const { switchSetting } = await import("../../core/config/env-settings.ts");
  assert.equal(
    switchSetting({ AGENTCLI_PG_PREPARED_STATEMENTS: "0" }, "AGENTCLI_PG_PREPARED_STATEMENTS", {
      default: true,
      meaning: "x",
    }),
    false,
  );
  assert.equal(switchSetting({}, "AGENTCLI_PG_PREPARED_STATEMENTS", { default: true, meaning: "x" }), true);
  assert.throws(
    () =>
      switchSetting({ AGENTCLI_PG_PREPARED_STATEMENTS: "maybe" }, "AGENTCLI_PG_PREPARED_STATEMENTS", {
        default: true,
        meaning: "x",
      }),
    /AGENTCLI_PG_PREPARED_STATEMENTS="maybe" is neither on nor off/,
  );
});

test("postgres: a statement prepared by name still runs after its table changed shape (a migration by another replica)", async () => {
  const schema2 = `agentcli_named_${process.pid}_${Date.now()}`;
  const admin = await openSql({ url: PG_URL });
  await admin.query(`CREATE SCHEMA ${schema2}`);
  // One connection, so the statement is prepared on the connection that later sees the change.
  const sql = await openSql({
    url: `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema2}`)}`,
    poolSize: 1,
  });
  try {
    await sql.query("CREATE TABLE t (a int)");
    await sql.query("INSERT INTO t VALUES (1)");
    const q = "SELECT * FROM t";
    for (let i = 0; i < 3; i++) assert.deepEqual((await sql.query(q)).rows, [{ a: 1 }]);
    await admin.query(`ALTER TABLE ${schema2}.t ADD COLUMN b int DEFAULT 2`);
    assert.deepEqual((await sql.query(q)).rows, [{ a: 1, b: 2 }]);
    assert.deepEqual((await sql.query(q)).rows, [{ a: 1, b: 2 }]);
  } finally {
    await sql.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema2} CASCADE`);
    await admin.close();
  }
});

test("migrations from processes starting together on one PostgreSQL apply once, without a race", async () => {
  const { migrate } = await import("../../core/storage/sql.ts");
  const schema = `migrate_race_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = await openSql({ url: PG_URL });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(PG_URL);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const replicas = await Promise.all(Array.from({ length: 4 }, () => openSql({ url: url.toString() })));
  try {
    const migrations = [{ version: 1, name: "one", up: "CREATE TABLE race_items (id text PRIMARY KEY);" }, {
      version: 2,
      name: "two",
      up: "ALTER TABLE race_items ADD COLUMN note text;",
    }];
    await Promise.all(replicas.map((sql) => migrate(sql, "race", migrations)));
    const { rows } = await admin.query<{ version: number }>(
      `SELECT version FROM ${schema}.agentcli_migrations WHERE scope = 'race' ORDER BY version`,
    );
    assert.deepEqual(rows.map((r) => Number(r.version)), [1, 2]);
    await admin.query(`INSERT INTO ${schema}.race_items (id, note) VALUES ('a', 'b')`);
  } finally {
    await Promise.all(replicas.map((sql) => sql.close()));
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.close();
  }
});
