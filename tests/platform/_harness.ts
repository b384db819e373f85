/**
 * A control plane for tests: a temporary data folder with the embedded database (or
 * PostgreSQL when PLATFORM_TEST_POSTGRES=1), two tenants with a key each, and a request
 * helper around `app.request()`.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { openPlatform, type Platform, type PlatformOptions } from "../../core/platform/server.ts";
import { createApiKey, createTenant } from "../../core/platform/store/tenancy.ts";
import { packTar } from "../../core/bundle/tar.ts";
import type { ComputeDriver, RolloutRequest } from "../../core/kernel/index.ts";
import { SERVING, type Serving, spawnServing } from "../_spawn-serving.ts";

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
/** The bundle `deploy` packs of a project made of exactly `files` (path -> text), with no plugins. */
export async function bundleOfFiles(files: Record<string, string>): Promise<Uint8Array> {
  const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
  const { dirname } = await import("node:path");
  const { PluginDriver } = await import("../../core/kernel/index.ts");
  const { loadProject } = await import("../../core/config/load.ts");
  const { buildBundle } = await import("../../core/bundle/bundle.ts");
  const dir = mkdtempSync(join(tmpdir(), "agentcli-files-"));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const driver = new PluginDriver([]);
    const project = await loadProject(dir, { driver, env: {}, requireEnv: false, cwd: dir });
    return (await buildBundle(project, { driver, version: "0.0.0-test" })).bytes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

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

/** Anything with Hono's `app.request()`: the control plane's app. */
type RequestApp = { request(path: string, init?: RequestInit): Response | Promise<Response> };

/** A JSON request to the control plane with the API key `key`; its status and parsed body. */
export async function keyedRequest(
  app: RequestApp,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await app.request(path, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Asks for an upload URL and PUTs `bundle` there (asserting the PUT's 200); the object path to patch in. */
export async function uploadBundle(app: RequestApp, key: string, deploymentId: string, bundle: Uint8Array) {
  const u = await keyedRequest(app, key, "POST", `/v2/deployments/${deploymentId}/upload-url`);
  const target = new URL(u.body.upload_url);
  const put = await app.request(target.pathname + target.search, {
    method: "PUT",
    body: bundle as Uint8Array<ArrayBuffer>,
  });
  assert.equal(put.status, 200);
  return u.body.object_path as string;
}

/**
 * Uploads `bundle` and patches it in as the deployment's next revision with `secrets` (and
 * `release` when given), asserting the PATCH's 200; the new revision's id.
 */
export async function deployBundle(
  app: RequestApp,
  key: string,
  deploymentId: string,
  bundle: Uint8Array,
  o: { secrets: { name: string; value: string }[]; release?: unknown },
): Promise<string> {
  const path = await uploadBundle(app, key, deploymentId, bundle);
  const patched = await keyedRequest(app, key, "PATCH", `/v2/deployments/${deploymentId}`, {
    source_revision_config: { source_tarball_path: path },
    secrets: o.secrets,
    ...(o.release ? { release: o.release } : {}),
  });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  return patched.body.latest_revision_id;
}

/**
 * The secrets of an agent on the test model server: its key and URL, and the per-user and
 * per-client run limits off (one client making many runs a minute, which an anonymous
 * deployment's default rate limits would refuse).
 */
export function modelSecrets(apiKey: string, baseUrl: string): { name: string; value: string }[] {
  return [
    { name: "OPENAI_API_KEY", value: apiKey },
    { name: "OPENAI_BASE_URL", value: baseUrl },
    { name: "AGENTCLI_USER_RUNS_PER_MINUTE", value: "0" },
    { name: "AGENTCLI_CLIENT_RUNS_PER_MINUTE", value: "0" },
  ];
}

/**
 * Waits for a revision to end (DEPLOYED, a *_FAILED status or INTERRUPTED) or, with `canary`,
 * to be DEPLOYING as a running canary; the revision as the API shows it.
 */
export async function revisionSettled(
  app: RequestApp,
  key: string,
  deploymentId: string,
  revisionId: string,
  o: { canary?: boolean; attempts?: number } = {},
): Promise<any> {
  return await until(
    async () => {
      const r = (await keyedRequest(app, key, "GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
      const canary = o.canary && r.status === "DEPLOYING" && /^canary: /.test(r.status_message ?? "");
      return r.status === "DEPLOYED" || r.status?.endsWith("_FAILED") || r.status === "INTERRUPTED" || canary
        ? r
        : null;
    },
    `revision ${revisionId} to settle`,
    o.attempts,
  );
}

/**
 * A listening control plane with a `k8s` listener (`computeId`, namespace `namespace`) whose
 * kubeconfig points at the stand-in Kubernetes API at `kubeUrl`, and a deployment `name` on it.
 */
export async function startK8sPlatform(
  kubeUrl: string,
  o: { computeId: string; namespace: string; name: string },
): Promise<{ t: TestPlatform; deploymentId: string }> {
  const { setListenerKubeconfig } = await import("../../core/platform/store/tenancy.ts");
  const { kubeconfig } = await import("./_kube-api.ts");
  const t = await startTestPlatform();
  const { url } = await t.platform.listen({ port: 0 });
  t.platform.services.publicUrl = url;
  const listener = await t.call("POST", "/v2/listeners", {
    body: { compute_type: "k8s", compute_id: o.computeId, compute_config: { k8s_namespaces: [o.namespace] } },
  });
  await setListenerKubeconfig(t.platform.sql, listener.body.id, kubeconfig(kubeUrl));
  const d = await t.call("POST", "/v2/deployments", {
    body: { name: o.name, source: "internal_source", source_config: { listener_id: listener.body.id } },
  });
  return { t, deploymentId: d.body.id };
}

/** A started `agentcli platform serve` and the default tenant's key it printed (null: the tenant existed). */
export interface PlatformServe extends Serving {
  key: string | null;
}

/**
 * `agentcli [...global] platform serve --port <free> --data-dir <dataDir>` (`exe`: an
 * executable, not bin/agentcli.js), once it says it
 * serves: on another port when another process took the one picked first (a taken port creates
 * no tenant, so the start that listens prints the key), unless `port` names the one it needs.
 */
export async function startPlatformServe(
  o: { dataDir: string; env: Record<string, string>; cwd?: string; global?: string[]; port?: number; exe?: string },
): Promise<PlatformServe> {
  const [cmd, ...pre] = o.exe ? [o.exe] : [process.execPath, join(import.meta.dirname, "../../bin/agentcli.js")];
  const s = await spawnServing({
    serving: SERVING.platform,
    port: o.port,
    start: (port) =>
      spawn(
        cmd!,
        [...pre, ...(o.global ?? []), "platform", "serve", "--port", String(port), "--data-dir", o.dataDir],
        { cwd: o.cwd, env: o.env, stdio: ["ignore", "pipe", "pipe"] },
      ),
  });
  // Printed before the banner.
  return Object.assign(s, { key: s.output().match(/\n\s+(acp_[A-Za-z0-9_-]+)\n/)?.[1] ?? null });
}

/** A GET (or, with `body`, a JSON POST) to `url` + `path`; the parsed JSON, or an error naming the path and status. */
export async function stableJson(url: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${text}`);
  return JSON.parse(text);
}

/** A k8s test's `after`: stops its pods, closes the control plane, the stand-in API and the model server, removes `work`. */
export async function closeK8sTest(o: {
  pods: Map<string, { stop(): Promise<void> }>;
  t?: TestPlatform;
  kube?: { close(): Promise<void> };
  model?: { close(): Promise<void> };
  work: string;
}): Promise<void> {
  await Promise.all([...o.pods.values()].map((p) => p.stop()));
  await o.t?.close();
  await o.kube?.close();
  await o.model?.close();
  if (o.work) await rm(o.work, { recursive: true, force: true });
}
