/**
 * A control plane for tests: a temporary data folder with the embedded database (or
 * PostgreSQL when PLATFORM_TEST_POSTGRES=1), two tenants with a key each, and a request
 * helper around `app.request()`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { openPlatform, type Platform, type PlatformOptions } from "../../core/platform/server.ts";
import { createApiKey, createTenant } from "../../core/platform/store/tenancy.ts";
import { packTar } from "../../core/bundle/tar.ts";
import type { ComputeDriver, RolloutRequest } from "../../core/kernel/index.ts";

export interface TestPlatform {
  platform: Platform;
  dataDir: string;
  keyA: string;
  keyA2: string;
  keyB: string;
  tenantA: string;
  tenantB: string;
  call(
    method: string,
    path: string,
    opts?: { key?: string | null; body?: unknown; raw?: string },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/** `postgres`: on PostgreSQL (a schema of its own) whatever PLATFORM_TEST_POSTGRES says. */
export async function startTestPlatform(
  options: Partial<PlatformOptions> & { postgres?: boolean } = {},
): Promise<TestPlatform> {
  const { postgres, ...opts } = options;
  const dataDir = await mkdtemp(join(tmpdir(), "agentcli-platform-test-"));
  let databaseUrl: string | undefined;
  let dropSchema = async () => {};
  if (postgres || process.env.PLATFORM_TEST_POSTGRES === "1") {
    const { openSql } = await import("../../core/storage/sql.ts");
    const root = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `platform_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const admin = await openSql({ url: root, poolSize: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(root);
    url.searchParams.set("options", `-c search_path=${schema}`);
    databaseUrl = url.toString();
    dropSchema = async () => {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    };
  }
  const { loadPlugins } = await import("../../core/kernel/plugins.ts");
  const { builtinPlugins } = await import("../../plugins/registry.ts");
  const driver = await loadPlugins(builtinPlugins);
  const platform = await openPlatform({
    dataDir,
    mode: "cloud",
    databaseUrl,
    onError: () => {},
    driver,
    ...opts,
  });
  const a = await createTenant(platform.sql, `tenant-a-${Date.now()}-${Math.random()}`);
  const b = await createTenant(platform.sql, `tenant-b-${Date.now()}-${Math.random()}`);
  const keyA = (await createApiKey(platform.sql, { tenantId: a.id, userId: "alice" })).key;
  const keyA2 = (await createApiKey(platform.sql, { tenantId: a.id, userId: "bob" })).key;
  const keyB = (await createApiKey(platform.sql, { tenantId: b.id, userId: "carol" })).key;
  const call: TestPlatform["call"] = async (method, path, o = {}) => {
    const headers: Record<string, string> = {};
    const key = o.key === undefined ? keyA : o.key;
    if (key) headers["x-api-key"] = key;
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await platform.app.request(path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch { /* not JSON: the body stays null */ }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return {
    platform,
    dataDir,
    keyA,
    keyA2,
    keyB,
    tenantA: a.id,
    tenantB: b.id,
    call,
    async close() {
      await platform.close();
      await dropSchema();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls `fn` until it returns a truthy value; gives up after `attempts` tries. */
export async function until<T>(
  fn: () => Promise<T | null | undefined | false>,
  what = "condition",
  attempts = 1200,
  intervalMs = 100,
): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** A well-formed archive (gzipped tar of one regular file) that is not a bundle: accepted by an upload, refused by the build. */
export function notABundle(): Uint8Array {
  return new Uint8Array(gzipSync(packTar(new Map([["README.txt", new TextEncoder().encode("not a bundle\n")]]))));
}

/**
 * Bundles a small valid project (the toolchain's own loader and bundler); `agentsMd` varies
 * the content, `agentToml` replaces the config, `plugins` are third-party plugin files.
 */
export async function makeBundle(
  opts: { name?: string; agentsMd?: string; agentToml?: string; plugins?: string[] } = {},
): Promise<Uint8Array> {
  const { makeProject, removeProject } = await import("../toolchain/_project.ts");
  const { loadPlugins } = await import("../../core/kernel/plugins.ts");
  const { builtinPlugins } = await import("../../plugins/registry.ts");
  const { loadProject } = await import("../../core/config/load.ts");
  const { buildBundle } = await import("../../core/bundle/bundle.ts");
  const dir = makeProject({
    "agent.toml": opts.agentToml ?? `[agent]\nname = "${opts.name ?? "platform-e2e"}"\nmodel = "openai:gpt-5"\n`,
    "AGENTS.md": opts.agentsMd ?? "# Platform test agent\n",
  });
  try {
    const driver = await loadPlugins(builtinPlugins, { paths: opts.plugins ?? [], cwd: dir });
    const project = await loadProject(join(dir, "agent.toml"), {
      driver,
      env: { OPENAI_API_KEY: "sk-test" },
      requireEnv: false,
      cwd: dir,
    });
    return (await buildBundle(project, { driver, version: "0.0.0-test" })).bytes;
  } finally {
    removeProject(dir);
  }
}

/**
 * Compute that runs nothing and records every rollout it is asked for: the control plane's
 * own flow (builds, statuses, secrets) without processes. `during` runs a step inside the next
 * rollout of the deployment so named; `fail` makes a rollout fail with its message.
 */
export class RecordingCompute implements ComputeDriver {
  readonly kind = "recording";
  rollouts: RolloutRequest[] = [];
  during = new Map<string, (req: RolloutRequest) => Promise<void>>();
  fail: (req: RolloutRequest) => string | null = () => null;
  async provision(): Promise<void> {}
  async rollout(req: RolloutRequest): Promise<{ url: string | null }> {
    const failure = this.fail(req);
    if (failure) throw new Error(failure);
    const during = this.during.get(req.deployment.name);
    this.during.delete(req.deployment.name);
    await during?.(req);
    this.rollouts.push(req);
    return { url: null };
  }
  async teardown(): Promise<void> {}
  async close(): Promise<void> {}
}
