/**
 * Named leases (core/storage/lease.ts): one holder at a time, renewed by its holder only,
 * taken over once expired, given up on release. On the embedded engine and PostgreSQL.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { LeaseStore, replicaId } from "../../core/storage/lease.ts";
import { openStorage, type Storage } from "../../core/storage/storage.ts";
import { openSql } from "../../core/storage/sql.ts";
import { sqlOf } from "../../core/storage/storage.ts";

const PG_URL = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

for (const engine of ["pglite", "postgres"] as const) {
  describe(`leases on ${engine}`, () => {
    const schema = `agentcli_lease_${process.pid}_${Date.now()}`;
    let storage: Storage;
    before(async () => {
      if (engine === "pglite") storage = await openStorage({});
      else {
        const admin = await openSql({ url: PG_URL });
        await admin.query(`CREATE SCHEMA ${schema}`);
        await admin.close();
        storage = await openStorage({ url: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}` });
      }
    });
    after(async () => {
      await storage?.close();
      if (engine === "postgres") {
        const admin = await openSql({ url: PG_URL });
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.close();
      }
    });

    test("one holder at a time; renewed by its holder; taken once expired; released", async () => {
      const a = new LeaseStore(sqlOf(storage), "a");
      const b = new LeaseStore(sqlOf(storage), "b");
      assert.equal(new LeaseStore(sqlOf(storage)).holder, replicaId());
      assert.equal(await a.acquire("sweep", 60_000), true);
      assert.equal(await b.acquire("sweep", 60_000), false, "held by a");
      assert.equal(await a.acquire("sweep", 60_000), true, "a extends its own");
      assert.deepEqual(await a.renew(["sweep", "other"], 60_000), ["sweep"]);
      assert.deepEqual(await b.renew(["sweep"], 60_000), [], "b does not hold it");
      assert.equal((await b.get("sweep"))?.holder, "a");
      // Expired: another holder takes it, and the first one's renewal says it lost it.
      assert.equal(await a.acquire("short", 1), true);
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await a.get("short"), null);
      assert.equal(await b.acquire("short", 60_000), true);
      assert.deepEqual(await a.renew(["short"], 60_000), []);
      await b.release("sweep"); // not b's: nothing happens
      assert.equal((await a.get("sweep"))?.holder, "a");
      await a.release("sweep");
      assert.equal(await b.acquire("sweep", 60_000), true);
    });
  });
}
