/**
 * The `platform` sandbox provider (plugins/sandbox/platform.ts) against our control plane:
 * create, execute with exit code and timeout, binary files, attach again by id (files kept),
 * delete (attaching again: not found), and a clear error without the control plane's address.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import platformSandbox from "../../plugins/sandbox/platform.ts";
import { isSandboxNotFound, type SandboxCreateOptions } from "../../core/kernel/hooks.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { startTestPlatform, type TestPlatform } from "./_harness.ts";

let t: TestPlatform;
const hook = platformSandbox.hooks!["sandbox:create"]!;
const open = (env: Record<string, string>, extra: Partial<SandboxCreateOptions> = {}) =>
  hook(
    {
      provider: "platform",
      key: "thread:t1",
      scope: "thread",
      template: "agentcli-default",
      image: "python:3",
      env,
      ...extra,
    } as SandboxCreateOptions,
  );

before(async () => {
  t = await startTestPlatform({ listen: { port: 0 }, sandboxSweepMs: 0 });
});
after(async () => t?.close());

test("the platform provider runs its sandboxes on the control plane at AGENTCLI_PLATFORM_URL", async () => {
  const env = { AGENTCLI_PLATFORM_URL: t.platform.listening!.url, PLATFORM_API_KEY: t.keyA };
  // The driver chooses the plugin by its declared provider: it is not asked for another one.
  const driver = new PluginDriver([platformSandbox]);
  assert.equal(
    await driver.runProvider({ hook: "sandbox:create", kind: "sandbox", key: "sandbox_a" }, {
      provider: "sandbox_a",
      key: "k",
      scope: "thread",
      template: "",
      image: "",
      env,
    }),
    null,
  );
  const box = (await open(env))!;
  assert.deepEqual(await box.execute("echo hi; exit 3"), { output: "hi\n", exitCode: 3, truncated: false });
  const timedOut = await box.execute("sleep 10", { timeoutMs: 1000 });
  assert.equal(timedOut.timedOut, true);
  const bytes = new Uint8Array([0, 255, 10, 13, 128]);
  assert.deepEqual(await box.uploadFiles([{ path: "/workspace/b.bin", content: bytes }]), [{
    path: "/workspace/b.bin",
    error: null,
  }]);
  const again = (await open(env, { sandboxId: box.id }))!;
  const [file, missing] = await again.downloadFiles(["/workspace/b.bin", "/workspace/none"]);
  assert.deepEqual([...file!.content!], [...bytes]);
  assert.equal(missing!.error, "file_not_found");
  const listed = await t.call("GET", "/v2/sandboxes/boxes");
  assert.deepEqual(listed.body.sandboxes.map((s: { name: string }) => s.name), [box.id]);
  await box.delete();
  await assert.rejects(open(env, { sandboxId: box.id }), (e: unknown) => isSandboxNotFound(e));
  await assert.rejects(open({ PLATFORM_API_KEY: t.keyA }), /AGENTCLI_PLATFORM_URL is not set/);
  await assert.rejects(
    open({ AGENTCLI_PLATFORM_URL: t.platform.listening!.url, AGENTCLI_PLATFORM_SANDBOX_KEY: "acp_wrong" }),
    /not valid/,
  );
});
