/**
 * Only core/storage/ writes the agent server's SQL (issue 32 step 2): `Storage` has no `sql`,
 * and no file of the other layers that use it runs a statement. The control plane has its own
 * database: only core/platform/store/ writes its statements (the rest of core/platform/ calls
 * the store's functions, opening a transaction where an operation needs one).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { openStorage, sqlOf } from "../../core/storage/storage.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const LAYERS = ["core/engine", "core/server", "core/harness", "core/testing", "core/cli"];
/** A statement run outside storage: on a storage's driver, a driver, or a transaction. */
const STATEMENT = /\bstorage\.sql\b|\.sql\.(?:query|transaction)\b|\btx\.query\b|\b(?:sql|this\.#o\.sql)\.query\s*[<(]/;

/** A statement on a driver, an executor or a transaction (Hono's `c.req.query(...)` reads the URL). */
const PLATFORM_STATEMENT = /(?<!\breq)\.(?:query|unsafe)\s*[<(]/;
const PLATFORM_STORE = "core/platform/store/";
/**
 * Files of core/platform/ outside its store that still run statements, each with why; the list
 * only shrinks (a listed file with no statement left fails).
 */
const PLATFORM_EXEMPT: Record<string, string> = {};

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** `file:line` of every statement line outside core/storage/. */
function statements(files: string[], pattern = STATEMENT): string[] {
  return files.flatMap((file) =>
    readFileSync(join(ROOT, file), "utf8").split("\n").flatMap((
      line,
      i,
    ) => (pattern.test(line) && !/^\s*(\*|\/\/)/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []))
  );
}

test("no file of engine, server, harness, testing or cli runs SQL: they call core/storage/'s stores", () => {
  assert.deepEqual(statements(LAYERS.flatMap(sources)), []);
});

test("no file of core/platform outside its store runs SQL: they call core/platform/store/'s functions", () => {
  const outside = sources("core/platform").filter((f) => !f.startsWith(PLATFORM_STORE) && !(f in PLATFORM_EXEMPT));
  assert.deepEqual(statements(outside, PLATFORM_STATEMENT), []);
});

test("each file exempt from the control plane's check still runs a statement (the list only shrinks)", () => {
  for (const file of Object.keys(PLATFORM_EXEMPT)) {
    assert.notDeepEqual(
      existsSync(join(ROOT, file)) ? statements([file], PLATFORM_STATEMENT) : [],
      [],
      `${file} runs no statement now: remove it from PLATFORM_EXEMPT`,
    );
  }
});

test("the control plane's check sees a planted statement, not a URL query", () => {
  assert.equal(PLATFORM_STATEMENT.test(`await s.sql.query<DeploymentRow>("SELECT 1")`), true);
  assert.equal(PLATFORM_STATEMENT.test(`await tx.query("UPDATE platform_revisions SET x = 1")`), true);
  assert.equal(PLATFORM_STATEMENT.test(`const { rows } = await db.query(`), true);
  assert.equal(PLATFORM_STATEMENT.test(`const kind = c.req.query("kind") || undefined;`), false);
  assert.equal(PLATFORM_STATEMENT.test(`await getRevision(db, d.id, r.id)`), false);
});

test("the check sees a planted statement", () => {
  assert.equal(STATEMENT.test(`await deps.storage.sql.query("SELECT 1")`), true);
  assert.equal(STATEMENT.test(`await tx.query("SELECT 1 FROM threads FOR UPDATE", [id])`), true);
  assert.equal(STATEMENT.test(`await this.#o.sql.query("DELETE FROM sandboxes")`), true);
  assert.equal(STATEMENT.test(`await storage.threads.lock(id, tx)`), false);
});

test("an open storage has no `sql`; tests reach the driver through sqlOf", async () => {
  const storage = await openStorage();
  try {
    assert.equal("sql" in storage, false);
    assert.equal(storage.kind, "pglite");
    assert.equal((await sqlOf(storage).query<{ n: number }>("SELECT 1 AS n")).rows[0]!.n, 1);
    const created = await storage.transaction(async (tx) => {
      await storage.threads.create({ thread_id: "t-face", metadata: {} }, tx);
      return storage.threads.lock("t-face", tx);
    });
    assert.equal(created, true);
    await assert.rejects(
      storage.transaction(async (tx) => {
        await storage.threads.create({ thread_id: "t-rolled-back", metadata: {} }, tx);
        throw new Error("roll back");
      }),
      /roll back/,
    );
    assert.equal(await storage.threads.get("t-rolled-back"), null);
  } finally {
    await storage.close();
  }
});
