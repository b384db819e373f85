import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { makeBundle, notABundle, startTestPlatform, type TestPlatform, until } from "./_harness.ts";
import deployPlatform from "../../plugins/deploy/platform.ts";
import { AgentcliError } from "../../core/kernel/errors.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import type { DeployTargetOptions } from "../../core/kernel/hooks.ts";

let t: TestPlatform;
let base = "";
before(async () => {
  t = await startTestPlatform();
  base = (await t.platform.listen({ port: 0 })).url;
  t.platform.services.publicUrl = base;
});
after(async () => {
  await t?.close();
});

async function put(url: string, bytes: Uint8Array): Promise<Response> {
  return fetch(url, { method: "PUT", body: bytes as Uint8Array<ArrayBuffer> });
}

async function revisionEnd(deploymentId: string, revisionId: string, states: string[]) {
  return until(async () => {
    const r = await t.call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    return states.includes(r.body.status) ? r.body : null;
  }, states.join("|"));
}

describe("uploads and the build of internal_source", () => {
  test("upload-url answers a signed URL; the PUT stores the bytes; tampered or empty uploads are refused", async () => {
    const d = await t.call("POST", "/v2/deployments", { body: { name: "upload-1", source: "internal_source" } });
    const u = await t.call("POST", `/v2/deployments/${d.body.id}/upload-url`);
    assert.equal(u.status, 201);
    assert.match(u.body.object_path, new RegExp(`^uploads/${d.body.id}/`));
    assert.match(u.body.upload_url, /signature=/);
    // Change the signature's first character (to one it is not: "A" alone failed 1 run in 64).
    const tampered = u.body.upload_url.replace(
      /signature=(.)/,
      (_: string, c: string) => `signature=${c === "A" ? "B" : "A"}`,
    );
    assert.equal((await put(tampered, new Uint8Array([1]))).status, 401);
    assert.equal((await put(u.body.upload_url, new Uint8Array())).status, 422);
    const early = await t.call("PATCH", `/v2/deployments/${d.body.id}`, {
      body: { source_revision_config: { source_tarball_path: u.body.object_path } },
    });
    assert.equal(early.status, 422, "an upload without bytes is not a source");
    const garbage = await put(u.body.upload_url, new TextEncoder().encode("not a bundle"));
    assert.equal(garbage.status, 422, "an upload that is not a gzipped archive is refused at once");
    const ok = await put(u.body.upload_url, notABundle());
    assert.equal(ok.status, 200);
  });

  test("a broken bundle ends BUILD_FAILED with the reason in the logs", async () => {
    const d = await t.call("POST", "/v2/deployments", { body: { name: "broken-1", source: "internal_source" } });
    const u = await t.call("POST", `/v2/deployments/${d.body.id}/upload-url`);
    assert.equal((await put(u.body.upload_url, notABundle())).status, 200);
    const p = await t.call("PATCH", `/v2/deployments/${d.body.id}`, {
      body: { source_revision_config: { source_tarball_path: u.body.object_path } },
    });
    assert.equal(p.status, 200);
    const r = await revisionEnd(d.body.id, p.body.latest_revision_id, ["BUILD_FAILED", "DEPLOYED", "DEPLOY_FAILED"]);
    assert.equal(r.status, "BUILD_FAILED");
    assert.match(r.status_message, /invalid bundle/);
    const logs = await t.call("GET", `/v2/deployments/${d.body.id}/revisions/${r.id}/logs?kind=build`);
    assert.ok(logs.body.logs.some((l: { message: string }) => /BUILD_FAILED: invalid bundle/.test(l.message)));
    const dep = await t.call("GET", `/v2/deployments/${d.body.id}`);
    assert.equal(dep.body.active_revision_id, null);
  });

  test("a valid bundle passes the build", async () => {
    const d = await t.call("POST", "/v2/deployments", { body: { name: "valid-1", source: "internal_source" } });
    const u = await t.call("POST", `/v2/deployments/${d.body.id}/upload-url`);
    await put(u.body.upload_url, await makeBundle());
    const p = await t.call("PATCH", `/v2/deployments/${d.body.id}`, {
      body: { source_revision_config: { source_tarball_path: u.body.object_path } },
    });
    const r = await revisionEnd(p.body.id, p.body.latest_revision_id, [
      "BUILD_FAILED",
      "DEPLOYED",
      "DEPLOY_FAILED",
      "DEPLOYING",
    ]);
    assert.notEqual(r.status, "BUILD_FAILED", r.status_message);
    const logs = await t.call("GET", `/v2/deployments/${d.body.id}/revisions/${r.id}/logs?kind=build`);
    assert.ok(
      logs.body.logs.some((l: { message: string }) => l.message.includes('bundle "platform-e2e"')),
      JSON.stringify(logs.body.logs),
    );
  });

  test("logs follow as Server-Sent Events until the revision ends", async () => {
    const d = await t.call("POST", "/v2/deployments", { body: { name: "sse-1", source: "internal_source" } });
    const u = await t.call("POST", `/v2/deployments/${d.body.id}/upload-url`);
    await put(u.body.upload_url, notABundle());
    const p = await t.call("PATCH", `/v2/deployments/${d.body.id}`, {
      body: { source_revision_config: { source_tarball_path: u.body.object_path } },
    });
    const res = await fetch(
      `${base}/v2/deployments/${d.body.id}/revisions/${p.body.latest_revision_id}/logs?follow=true`,
      { headers: { "x-api-key": t.keyA } },
    );
    assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
    const text = await res.text();
    assert.match(text, /event: status/);
    assert.match(text, /BUILD_FAILED/);
    assert.match(text, /event: log/);
  });
});

describe("the platform deploy target", () => {
  const log = () => {
    const lines: string[] = [];
    return { lines, info: (m: string) => void lines.push(m), warn: (m: string) => void lines.push(`warn: ${m}`) };
  };
  const deployTarget = deployPlatform.hooks["deploy:target"]!;
  /** The hook, with what these tests do not vary: the project in ".", agentcli run from sources. */
  const hook = (o: Omit<DeployTargetOptions, "projectDir" | "executable" | "version">) =>
    deployTarget({ projectDir: ".", executable: null, version: "0", ...o });

  test("is chosen only for target platform (the driver picks it by its declared target)", async () => {
    const driver = new PluginDriver([deployPlatform]);
    assert.equal(driver.provider("deploy", "platform"), deployPlatform);
    const opts = {
      target: "elsewhere",
      bundle: new Uint8Array(),
      name: "x",
      secrets: [],
      env: {},
      projectDir: ".",
      executable: null,
      version: "0",
      log: log(),
    };
    assert.equal(await driver.runProvider({ hook: "deploy:target", kind: "deploy", key: "elsewhere" }, opts), null);
  });

  test("needs PLATFORM_API_KEY, and names a refused key", async () => {
    await assert.rejects(
      hook({
        target: "platform",
        bundle: new Uint8Array(),
        name: "x",
        secrets: [],
        env: { AGENTCLI_PLATFORM_URL: base },
        log: log(),
      }),
      /PLATFORM_API_KEY is not set/,
    );
    await assert.rejects(
      hook({
        target: "platform",
        bundle: new Uint8Array(),
        name: "x",
        secrets: [],
        env: { AGENTCLI_PLATFORM_URL: base, PLATFORM_API_KEY: "acp_bad" },
        log: log(),
      }),
      /refused PLATFORM_API_KEY/,
    );
    await assert.rejects(
      hook({
        target: "platform",
        bundle: new Uint8Array(),
        name: "x",
        secrets: [],
        env: { AGENTCLI_PLATFORM_URL: "http://127.0.0.1:9", PLATFORM_API_KEY: "k" },
        log: log(),
      }),
      /Cannot reach the control plane/,
    );
  });

  test("a broken bundle: creates the deployment, uploads, and throws BUILD_FAILED with the logs", async () => {
    const l = log();
    const err = await hook({
      target: "platform",
      bundle: notABundle(),
      name: "plugin-broken",
      secrets: [{ name: "OPENAI_API_KEY", value: "sk-from-dotenv" }],
      env: { AGENTCLI_PLATFORM_URL: base, PLATFORM_API_KEY: t.keyA },
      log: l,
    }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof AgentcliError, String(err));
    assert.match(err.message, /ended BUILD_FAILED: invalid bundle/);
    assert.match(err.message, /logs:/);
    assert.ok(l.lines.some((x) => x.includes("Creating deployment")));
    assert.ok(l.lines.some((x) => /\d+\.\ds\s+BUILD_FAILED/.test(x)), l.lines.join("\n"));
    const list = await t.call("GET", "/v2/deployments?name_contains=plugin-broken");
    assert.equal(list.body.resources.length, 1);
    // Exactly the secrets it was given: the hook adds no PLATFORM_API_KEY of its own (deploy chooses; tests/platform/deploy-secrets.test.ts).
    assert.deepEqual(list.body.resources[0].secrets, [{ name: "OPENAI_API_KEY", value: "********" }]);
    const again = await hook({
      target: "platform",
      bundle: notABundle(),
      name: "plugin-broken",
      secrets: [],
      env: { AGENTCLI_PLATFORM_URL: base, PLATFORM_API_KEY: t.keyA },
      log: log(),
    }).then(() => null, (e: unknown) => e);
    assert.ok(again instanceof AgentcliError);
    const revs = await t.call("GET", `/v2/deployments/${list.body.resources[0].id}/revisions`);
    assert.equal(revs.body.resources.length, 2, "the second deploy reuses the deployment and makes a new revision");
  });
});
