/**
 * Encryption at rest (`LANGGRAPH_AES_KEY`): a sentinel written through a run's messages, the
 * store and an encrypted metadata key (`LANGGRAPH_AES_JSON_KEYS`) reads back through the SDK
 * and is nowhere in plaintext: not in the embedded engine's data directory, not in any row of
 * PostgreSQL (with `AGENTCLI_TEST_SERVER_ON_POSTGRES=1`). The same scan without a key finds it,
 * so the scan itself can fail. Rotation: a previous key still reads; bad keys are start-up errors.
 */
import type { Run } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { isUserError } from "../../core/kernel/errors.ts";
import { AtRestEncryption, encryptionFromEnv } from "../../core/storage/encryption.ts";
import type { StorageOptions } from "../../core/storage/storage.ts";
import { filesContaining, rowsContaining } from "../_plaintext.ts";
import { startTestServer, type TestServer } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

const onPostgres = process.env.AGENTCLI_TEST_SERVER_ON_POSTGRES === "1";
const KEY = "0123456789abcdef0123456789abcdef";
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newDataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "agentcli-enc-"));
  dirs.push(d);
  return join(d, "db");
}

/** Writes the sentinel through a run, the store and a metadata key, and checks it reads back. */
async function writeSentinel(t: TestServer, sentinel: string): Promise<string> {
  const thread = await t.client.threads.create({ metadata: { secret_note: `${sentinel}-meta`, visible: "yes" } });
  await t.client.runs.wait(thread.thread_id, "echo", {
    input: { messages: [{ role: "user", content: `hello ${sentinel}` }] },
  });
  const state = await t.client.threads.getState<{ messages: Array<{ content: string }> }>(thread.thread_id);
  assert.deepEqual(state.values.messages.map((m) => m.content), [`hello ${sentinel}`, `echo: hello ${sentinel}`]);
  const [run] = await t.client.runs.list(thread.thread_id);
  assert.equal(
    // LangGraph's API answers a run's kwargs (its input); the SDK's Run type leaves them out.
    (run as Run & { kwargs: { input: { messages: Array<{ content: string }> } } }).kwargs.input.messages[0]!.content,
    `hello ${sentinel}`,
  );
  const streamed = [];
  for await (const chunk of t.client.runs.joinStream(thread.thread_id, run!.run_id)) streamed.push(chunk);
  assert.ok(JSON.stringify(streamed).includes(sentinel), "the stored stream log replays the sentinel");
  assert.equal((await t.client.threads.get(thread.thread_id)).metadata?.secret_note, `${sentinel}-meta`);
  assert.equal((await t.client.threads.search({ metadata: { visible: "yes" } })).length, 1);
  await t.client.store.putItem(["notes", "u1"], "n1", { text: `remember ${sentinel}`, kind: "memo", n: 3 });
  await t.client.store.putItem(["notes", "u1"], "n2", { text: "something else", kind: "todo", n: 7 });
  assert.equal((await t.client.store.getItem(["notes", "u1"], "n1"))?.value.text, `remember ${sentinel}`);
  const byQuery = await t.client.store.searchItems(["notes"], { query: sentinel });
  assert.deepEqual(byQuery.items.map((i) => i.key), ["n1"]);
  const byFilter = await t.client.store.searchItems(["notes"], { filter: { n: { $gt: 5 } } });
  assert.deepEqual(byFilter.items.map((i) => i.key), ["n2"]);
  return thread.thread_id;
}

async function start(encryption: AtRestEncryption | null, dataDir?: string): Promise<TestServer> {
  const storage: StorageOptions = onPostgres ? { encryption } : { dataDir: dataDir ?? newDataDir(), encryption };
  return startTestServer({ storage });
}

describe("encryption at rest", () => {
  test("with a key, the sentinel is nowhere in plaintext; without one the same scan finds it", async () => {
    for (const keyed of [true, false]) {
      const sentinel = `SENTINEL${keyed ? "K" : "P"}${crypto.randomUUID().replaceAll("-", "")}`;
      const dataDir = newDataDir();
      const enc = keyed ? encryptionFromEnv({ LANGGRAPH_AES_KEY: KEY, LANGGRAPH_AES_JSON_KEYS: "secret_note" }) : null;
      const t = await start(enc, dataDir);
      let found: string[];
      try {
        const threadId = await writeSentinel(t, sentinel);
        if (keyed) {
          await assert.rejects(t.client.threads.search({ metadata: { secret_note: "x" } }), /422|encrypted at rest/);
          assert.equal((await t.client.threads.get(threadId)).metadata?.visible, "yes");
        }
        await t.server.storage.checkpointer.flush();
        found = onPostgres ? await rowsContaining(sqlOf(t.server.storage), sentinel) : [];
      } finally {
        await t.close();
      }
      if (!onPostgres) found = filesContaining(dataDir, sentinel);
      if (keyed) assert.deepEqual(found, [], `plaintext found in ${found.join(", ")}`);
      else assert.ok(found.length > 0, "without a key the sentinel is stored in plaintext (the scan works)");
    }
  });

  test("rotation: data written with the previous key is read after the key changes", {
    skip: onPostgres && "the data directory is PGlite's",
  }, async () => {
    const dataDir = newDataDir();
    const oldKey = "old-key-16-bytes";
    let t = await start(encryptionFromEnv({ LANGGRAPH_AES_KEY: oldKey }), dataDir);
    const threadId = await writeSentinel(t, "ROTATE1");
    await t.close();
    t = await start(encryptionFromEnv({ LANGGRAPH_AES_KEY: KEY, LANGGRAPH_AES_PREVIOUS_KEYS: oldKey }), dataDir);
    try {
      const state = await t.client.threads.getState<{ messages: Array<{ content: string }> }>(threadId);
      assert.equal(state.values.messages.at(-1)?.content, "echo: hello ROTATE1");
      assert.equal((await t.client.store.getItem(["notes", "u1"], "n1"))?.value.text, "remember ROTATE1");
      await t.client.store.putItem(["notes", "u1"], "n3", { text: "new" });
    } finally {
      await t.close();
    }
    // Without the previous key, old values cannot be read: an error, never garbage.
    t = await start(encryptionFromEnv({ LANGGRAPH_AES_KEY: KEY }), dataDir);
    try {
      assert.equal((await t.client.store.getItem(["notes", "u1"], "n3"))?.value.text, "new");
      await assert.rejects(t.client.store.getItem(["notes", "u1"], "n1"));
    } finally {
      await t.close();
    }
  });

  test("sealed interrupts: a thread left busy is freed interrupted when it waits on one, idle when not", {
    skip: onPostgres && "the data directory is PGlite's",
  }, async () => {
    const dataDir = newDataDir();
    const enc = () => encryptionFromEnv({ LANGGRAPH_AES_KEY: KEY });
    let t = await start(enc(), dataDir);
    const waiting = await t.client.threads.create();
    const done = await t.client.threads.create();
    try {
      await t.client.runs.wait(waiting.thread_id, "interrupt", { input: { question: "go on?" } });
      await t.client.runs.wait(done.thread_id, "echo", { input: { messages: [{ role: "user", content: "hi" }] } });
      await sqlOf(t.server.storage).query("UPDATE threads SET status = 'busy' WHERE thread_id = ANY($1::text[])", [[
        waiting.thread_id,
        done.thread_id,
      ]]);
    } finally {
      await t.close();
    }
    t = await start(enc(), dataDir);
    try {
      assert.equal((await t.client.threads.get(waiting.thread_id)).status, "interrupted");
      assert.equal((await t.client.threads.get(done.thread_id)).status, "idle");
    } finally {
      await t.close();
    }
  });

  test("keys of the wrong length and system JSON keys are start-up errors naming the variable", () => {
    const message = (env: Record<string, string>) => {
      try {
        encryptionFromEnv(env);
      } catch (err) {
        assert.ok(isUserError(err));
        return err.message;
      }
      assert.fail("expected an error");
    };
    assert.match(
      message({ LANGGRAPH_AES_KEY: "short" }),
      /LANGGRAPH_AES_KEY: an AES key must be 16, 24 or 32 bytes .* is 5/,
    );
    assert.match(
      message({ LANGGRAPH_AES_KEY: KEY, LANGGRAPH_AES_PREVIOUS_KEYS: "x".repeat(20) }),
      /LANGGRAPH_AES_PREVIOUS_KEYS \(key 1\).* is 20/,
    );
    assert.match(message({ LANGGRAPH_AES_JSON_KEYS: "a" }), /LANGGRAPH_AES_KEY is not set/);
    assert.match(message({ LANGGRAPH_AES_KEY: KEY, LANGGRAPH_AES_JSON_KEYS: "owner,x" }), /"owner" is a system field/);
    assert.equal(encryptionFromEnv({}), null);
    for (const len of [16, 24, 32]) {
      const enc = new AtRestEncryption([new Uint8Array(len).fill(7)]);
      assert.deepEqual(enc.openJson(enc.sealJson({ a: [1, "x"] })), { a: [1, "x"] });
      const sealed = enc.seal(new TextEncoder().encode("plain"));
      sealed[sealed.length - 1]! ^= 1;
      assert.throws(() => enc.open(sealed), "a changed envelope does not open");
    }
  });
});
