/**
 * The durable scope mapping (core/harness/sandbox/manager.ts) on PGlite and PostgreSQL, with a
 * recording provider plugin: one sandbox for concurrent runs of a new scope, also from two
 * managers (two replicas) on one database; a failed creation leaves no row and no orphan;
 * creation of one key does not hold up another; idle sandboxes stop and resume; a thread's
 * deletion deletes its sandbox; a vanished sandbox is recreated with a notice.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { definePlugin, type Sandbox, SandboxNotFoundError } from "../../core/kernel/hooks.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { SandboxManager } from "../../core/harness/sandbox/manager.ts";
import { openSql, type SqlDriver } from "../../core/storage/sql.ts";
import { SandboxRecords } from "../../core/storage/sandboxes.ts";
import { createStorage, type Storage } from "../../core/storage/storage.ts";

const PG_URL = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `agentcli_sbx_${process.pid}_${Date.now()}`;

/** A provider that keeps its sandboxes in a Map and records every call. */
function recordingProvider() {
  const live = new Map<string, { files: Map<string, Uint8Array>; stopped: boolean }>();
  const calls: string[] = [];
  let gate: Promise<void> | null = null;
  let failNext: "before" | "after" | null = null;
  const plugin = definePlugin({
    name: "test-recording-sandbox",
    kind: "extension",
    hooks: {
      "sandbox:create": async (opts) => {
        if (opts.provider !== "sandbox_a") return null;
        let id = opts.sandboxId;
        if (id) {
          if (!live.has(id)) throw new SandboxNotFoundError(id);
          calls.push(`attach ${opts.key}`);
        } else {
          calls.push(`create ${opts.key}`);
          if (gate) await gate;
          if (failNext === "before") {
            failNext = null;
            throw new Error("the provider refused");
          }
          id = `box-${crypto.randomUUID()}`;
          live.set(id, { files: new Map(), stopped: false });
        }
        const box = (): { files: Map<string, Uint8Array>; stopped: boolean } => {
          const b = live.get(id!);
          if (!b) throw new SandboxNotFoundError(id!);
          return b;
        };
        const sandbox: Sandbox = {
          id,
          execute: async (command) => {
            if (box().stopped) throw new Error("execute on a stopped sandbox");
            return { output: `ran ${command}`, exitCode: 0, truncated: false };
          },
          uploadFiles: async (files) =>
            files.map((f) => (box().files.set(f.path, f.content), { path: f.path, error: null })),
          downloadFiles: async (paths) =>
            paths.map((p) => ({
              path: p,
              content: box().files.get(p) ?? null,
              error: box().files.has(p) ? null : "file_not_found" as const,
            })),
          delete: async () => {
            calls.push(`delete ${id}`);
            live.delete(id!);
          },
          stop: async () => {
            calls.push(`stop ${id}`);
            box().stopped = true;
          },
          resume: async () => {
            calls.push(`resume ${id}`);
            box().stopped = false;
          },
        };
        if (failNext === "after") {
          // The sandbox exists at the provider, then something fails: the manager must delete it.
          failNext = null;
          return {
            ...sandbox,
            get id(): string {
              throw new Error("lost the id");
            },
          } as Sandbox;
        }
        return sandbox;
      },
    },
  });
  return {
    plugin,
    live,
    calls,
    hold: () => {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = null;
        release();
      };
    },
    failNext: (when: "before" | "after") => (failNext = when),
  };
}

const engines = [
  { name: "pglite", open: () => openSql(), cleanup: async () => {} },
  {
    name: "postgres",
    open: async () => {
      const admin = await openSql({ url: PG_URL });
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await admin.close();
      return openSql({ url: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}` });
    },
    cleanup: async () => {
      const admin = await openSql({ url: PG_URL });
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.close();
    },
  },
];

for (const engine of engines) {
  describe(`sandbox scope mapping on ${engine.name}`, () => {
    let storage: Storage;
    let sql: SqlDriver;
    const provider = recordingProvider();
    const managers: SandboxManager[] = [];
    const manager = (env: Record<string, string> = {}) => {
      const m = new SandboxManager({
        records: new SandboxRecords(sql),
        driver: new PluginDriver([provider.plugin]),
        env: { SANDBOX_A_API_KEY: "k", AGENTCLI_SANDBOX_IDLE_SECONDS: "0", ...env },
        runtime: null,
        host: null,
        settings: () => ({ provider: "sandbox_a", template: "t", image: "python:3", scope: "thread" }),
      });
      managers.push(m);
      return m;
    };
    const target = (thread: string) => ({ key: `thread:${thread}`, scope: "thread" as const, threadId: thread });
    const rows = async (thread: string) =>
      (await sql.query<{ sandbox_id: string | null; status: string }>(
        "SELECT sandbox_id, status FROM sandboxes WHERE scope_key = $1",
        [`thread:${thread}`],
      )).rows;

    before(async () => {
      sql = await engine.open();
      storage = await createStorage(sql);
    });
    after(async () => {
      for (const m of managers) await m.close();
      await storage?.close();
      await engine.cleanup();
    });

    test("concurrent first uses of a new scope, on two replicas, create one sandbox", async () => {
      const [a, b] = [manager(), manager()];
      const leases = await Promise.all([
        a.acquire(target("c1")),
        b.acquire(target("c1")),
        a.acquire(target("c1")),
        b.acquire(target("c1")),
      ]);
      assert.equal(new Set(leases.map((l) => l.sandbox.id)).size, 1);
      assert.equal(provider.calls.filter((c) => c === "create thread:c1").length, 1);
      assert.deepEqual(await rows("c1"), [{ sandbox_id: leases[0]!.sandbox.id, status: "ready" }]);
    });

    test("a restart (a new manager) attaches to the same sandbox", async () => {
      const first = await manager().acquire(target("r1"));
      const again = await manager().acquire(target("r1"));
      assert.equal(again.sandbox.id, first.sandbox.id);
      assert.ok(provider.calls.includes("attach thread:r1"));
    });

    test("a slow creation holds up only its own scope", async () => {
      const m = manager();
      const release = provider.hold();
      const slow = m.acquire(target("slow"));
      await new Promise((r) => setTimeout(r, 50));
      // "slow" waits at the provider; a scope that has its sandbox is served meanwhile.
      const fast = await m.acquire(target("c1"));
      assert.ok(fast.sandbox.id);
      assert.deepEqual(await rows("slow"), [{ sandbox_id: null, status: "creating" }]);
      release();
      await slow;
      assert.equal((await rows("slow"))[0]!.status, "ready");
    });

    test("a failed creation leaves no row and no sandbox at the provider", async () => {
      const m = manager();
      provider.failNext("before");
      await assert.rejects(m.acquire(target("f1")), /the provider refused/);
      assert.deepEqual(await rows("f1"), []);
      const before = provider.live.size;
      provider.failNext("after");
      await assert.rejects(m.acquire(target("f2")), /lost the id/);
      assert.deepEqual(await rows("f2"), []);
      assert.equal(provider.live.size, before, "the half-made sandbox was deleted at the provider");
      const ok = await m.acquire(target("f2"));
      assert.ok(provider.live.has(ok.sandbox.id));
    });

    test("idle sandboxes are stopped and resumed on next use", async () => {
      const m = manager();
      const { sandbox } = await m.acquire(target("idle"));
      await sql.query("UPDATE sandboxes SET last_used_at = now() - interval '1 hour' WHERE scope_key = 'thread:idle'");
      assert.ok((await m.stopIdle(60_000)) >= 1);
      assert.deepEqual(await rows("idle"), [{ sandbox_id: sandbox.id, status: "stopped" }]);
      assert.ok(provider.calls.includes(`stop ${sandbox.id}`));
      const again = await manager().acquire(target("idle"));
      assert.equal(again.sandbox.id, sandbox.id);
      assert.ok(provider.calls.includes(`resume ${sandbox.id}`));
      assert.equal((await again.sandbox.execute("true")).output, "ran true");
      assert.equal((await rows("idle"))[0]!.status, "ready");
    });

    test("a stale creation claim (its creator died) is taken over", async () => {
      await sql.query(
        "INSERT INTO sandboxes (scope_key, backend, status, thread_id, claim_token, claimed_until) VALUES ('thread:dead', 'sandbox_a', 'creating', 'dead', 'gone', now() - interval '1 second')",
      );
      const { sandbox } = await manager().acquire(target("dead"));
      assert.deepEqual(await rows("dead"), [{ sandbox_id: sandbox.id, status: "ready" }]);
    });

    test("a vanished sandbox is recreated, once, with a notice", async () => {
      const m = manager();
      const { sandbox } = await m.acquire(target("v1"));
      provider.live.delete(sandbox.id);
      const other = manager();
      const lease = await other.acquire(target("v1"));
      assert.notEqual(lease.sandbox.id, sandbox.id);
      assert.match(
        lease.notice ?? "",
        /no longer existed at the provider[\s\S]*files written to the old sandbox are gone/,
      );
      assert.equal((await other.acquire(target("v1"))).notice, null);
    });

    test("deleting a thread deletes its sandbox at the provider and its row", async () => {
      const m = manager();
      const { sandbox } = await m.acquire(target("d1"));
      await m.deleteThread("d1");
      assert.deepEqual(await rows("d1"), []);
      assert.ok(!provider.live.has(sandbox.id));
    });
  });
}
