/**
 * New embedded databases start from a template instead of `initdb`: the template is made on
 * first use and cached (keyed by PGlite version and migrations), a database restored from it
 * is a durable, fully migrated database of its own, and the executable's template
 * (`createPgliteTemplate`, the SEA asset) seeds one too.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { SERVER_MIGRATIONS, SERVER_TEMPLATE } from "../../core/storage/migrations.ts";
import { openStorage, sqlOf } from "../../core/storage/storage.ts";
import {
  createPgliteTemplate,
  parseTar,
  restoreTemplate,
  saveTemplate,
  templateCachePath,
  TEMPLATES_KEPT,
} from "../../core/storage/template.ts";
import { gunzipSync } from "node:zlib";

let dir: string;
const savedCache = process.env.XDG_CACHE_HOME;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "agentcli-template-"));
  process.env.XDG_CACHE_HOME = join(dir, "cache");
});

after(() => {
  if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = savedCache;
  rmSync(dir, { recursive: true, force: true });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(check(), "condition not met in time");
}

test("the first new database writes the template; the next ones are restored from it and are durable", async () => {
  const cache = templateCachePath(SERVER_TEMPLATE)!;
  assert.ok(cache.startsWith(join(dir, "cache", "agentcli")), cache);
  assert.match(cache, /pglite-\d+\.\d+\.\d+-server-[0-9a-f]{12}\.tar\.gz$/);
  assert.equal(existsSync(cache), false);

  const first = await openStorage({ dataDir: join(dir, "a") });
  await first.close();
  await waitFor(() => existsSync(cache));

  const dataDir = join(dir, "b");
  const second = await openStorage({ dataDir });
  assert.equal(existsSync(join(dataDir, "PG_VERSION")), true);
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith(".restoring")),
    [],
    "no half-restored directory left behind",
  );
  const { rows } = await sqlOf(second).query<{ version: number }>(
    "SELECT version FROM agentcli_migrations WHERE scope = 'server'",
  );
  assert.deepEqual(rows.map((r) => Number(r.version)).sort((a, b) => a - b), SERVER_MIGRATIONS.map((m) => m.version));
  await sqlOf(second).query("SELECT 1 FROM checkpoint_blobs LIMIT 1"); // the latest schema
  const t = await second.threads.create({ thread_id: crypto.randomUUID(), metadata: { n: 1 } });
  await second.store.put(["u"], "k", { v: 1 });
  await second.close();

  const reopened = await openStorage({ dataDir });
  assert.deepEqual((await reopened.threads.get(t!.thread_id))?.metadata, { n: 1 });
  assert.deepEqual((await reopened.store.get(["u"], "k"))?.value, { v: 1 });
  assert.equal(await reopened.threads.count({}), 1, "a restored database holds only what was written to it");
  await reopened.close();
});

test("an in-memory database is seeded from the cached template too", async () => {
  const s = await openStorage();
  assert.equal(await s.threads.count({}), 0);
  await s.threads.create({ thread_id: "x", metadata: {} });
  assert.equal(await s.threads.count({}), 1);
  await s.close();
});

test("a broken template never breaks opening: the database is made with initdb", async () => {
  const { writeFileSync, statSync } = await import("node:fs");
  const cache = templateCachePath(SERVER_TEMPLATE)!;
  writeFileSync(cache, new Uint8Array([1, 2, 3]));
  const s = await openStorage({ dataDir: join(dir, "c") });
  assert.equal(await s.threads.count({}), 0);
  await s.close();
  await waitFor(() => statSync(cache).size > 1000); // rewritten from the new database
});

test("createPgliteTemplate (the executable's asset) is a migrated database that restores", async () => {
  const gz = await createPgliteTemplate();
  const names = parseTar(new Uint8Array(gunzipSync(gz))).map((e) => e.path);
  assert.ok(names.some((n) => n.endsWith("PG_VERSION")));
  const dataDir = join(dir, "d");
  await restoreTemplate(gz, dataDir);
  const s = await openStorage({ dataDir, template: false });
  const { rows } = await sqlOf(s).query<{ n: string }>(
    "SELECT count(*) AS n FROM agentcli_migrations WHERE scope = 'server'",
  );
  assert.equal(Number(rows[0]!.n), SERVER_MIGRATIONS.length);
  await s.assistants.create({
    assistant_id: "a1",
    graph_id: "g",
    config: {},
    metadata: {},
    name: "n",
    description: null,
  });
  assert.equal((await s.assistants.get("a1"))?.name, "n");
  await s.close();
});

test("the cache keeps the last templates of a name (other PGlite versions or migrations) and prunes the rest", async () => {
  const { mkdirSync, writeFileSync, utimesSync, readFileSync } = await import("node:fs");
  const cache = templateCachePath(SERVER_TEMPLATE)!;
  const folder = join(cache, "..");
  mkdirSync(folder, { recursive: true });
  const old = ["0.5.1", "0.5.2", "0.5.3", "0.5.4"].map((v, i) => {
    const f = join(folder, `pglite-${v}-server-${String(i).repeat(12)}.tar.gz`);
    writeFileSync(f, "old");
    utimesSync(f, 1000 + i, 1000 + i);
    return f;
  });
  const base = join(folder, "pglite-0.5.1-base-aaaaaaaaaaaa.tar.gz");
  writeFileSync(base, "base");
  utimesSync(base, 10, 10);
  const unrelated = join(folder, "notes.txt");
  writeFileSync(unrelated, "mine");

  await saveTemplate(SERVER_TEMPLATE, new Uint8Array([31, 139, 1]));
  assert.deepEqual([...readFileSync(cache)], [31, 139, 1]);
  const kept = readdirSync(folder).filter((f) => /-server-/.test(f)).sort();
  assert.equal(kept.length, TEMPLATES_KEPT);
  assert.deepEqual(
    kept,
    [cache, old[3]!, old[2]!].map((f) => f.slice(folder.length + 1)).sort(),
    "the newest ones stay",
  );
  assert.equal(existsSync(base), true, "another template's files are not touched");
  assert.equal(existsSync(unrelated), true);
});
