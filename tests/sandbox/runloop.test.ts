/**
 * `sandbox_c` (Runloop) with the real `@runloop/api-client` and our plugin, against a local
 * stand-in speaking Runloop's REST API over HTTP/2 (tests/fixtures/sandbox-vendors/runloop):
 * the shared conformance suite, then the vendor's failures (refused key, unknown blueprint or
 * image, quota, unreachable API), the metadata, suspend/resume, and the key never showing in
 * what the agent sees.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { sandboxConformance } from "../../core/testing/sandbox-conformance.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import sandboxC, { imageBlueprintName } from "../../plugins/sandbox/sandbox_c.ts";
import { type RunloopStandIn, startRunloopStandIn } from "../fixtures/sandbox-vendors/runloop/server.ts";
import { keyStaysOutOfToolResults } from "../fixtures/sandbox-vendors/key-leak.ts";
import { isSandboxNotFound, type Sandbox, type SandboxCreateOptions } from "../../core/kernel/hooks.ts";

const KEY = `ak_${crypto.randomUUID().replace(/-/g, "")}`;
const standIn = await startRunloopStandIn({ apiKey: KEY, blueprints: ["agentcli-blueprint"] });
after(() => standIn.close());

sandboxConformance({
  name: "sandbox_c (Runloop stand-in)",
  provider: "sandbox_c",
  builtins: builtinPlugins,
  env: { SANDBOX_C_API_KEY: KEY, SANDBOX_C_API_URL: standIn.url },
  startModelServer,
  workdir: "/workspace",
});

const hook = sandboxC.hooks!["sandbox:create"]!;
const create = (o: Partial<SandboxCreateOptions> & { env: Record<string, string> }) =>
  hook({
    provider: "sandbox_c",
    key: "thread:t-1",
    scope: "thread",
    template: "agentcli-default",
    image: "python:3",
    ...o,
  }) as Promise<Sandbox>;
const envOf = (s: RunloopStandIn, key = KEY) => ({ SANDBOX_C_API_KEY: key, SANDBOX_C_API_URL: s.url });

describe("sandbox_c (Runloop): metadata, mapping and failures", () => {
  test("devboxes carry the deployment, scope and scope key as metadata, and suspend when idle instead of shutting down", async () => {
    const box = await create({
      key: "assistant:a-42",
      scope: "assistant",
      env: { ...envOf(standIn), AGENTCLI_DEPLOYMENT_ID: "dep-7" },
    });
    const d = standIn.devboxes.get(box.id)!;
    assert.deepEqual(d.metadata, {
      "agentcli.deployment": "dep-7",
      "agentcli.scope": "assistant",
      "agentcli.scope-key": "assistant:a-42",
    });
    assert.deepEqual(d.launch_parameters.after_idle, { idle_time_seconds: 3600, on_idle: "suspend" });
    await box.delete();
    assert.equal(standIn.devboxes.get(box.id)!.status, "shutdown");
  });

  test("template names a blueprint; the default template uses the blueprint built from the image, once (also for concurrent creations)", async () => {
    const [a, b] = await Promise.all([
      create({ image: "node:22", env: envOf(standIn) }),
      create({ image: "node:22", key: "thread:t-2", env: envOf(standIn) }),
    ]);
    const built = [...standIn.blueprints.values()].filter((x) => x.name === imageBlueprintName("node:22"));
    assert.equal(built.length, 1);
    assert.equal(built[0]!.dockerfile, "FROM node:22\n");
    assert.equal(standIn.devboxes.get(a.id)!.blueprint_id, built[0]!.id);
    assert.equal(standIn.devboxes.get(b.id)!.blueprint_id, built[0]!.id);
    const named = await create({ template: "agentcli-blueprint", env: envOf(standIn) });
    assert.equal(standIn.blueprints.get(standIn.devboxes.get(named.id)!.blueprint_id!)!.name, "agentcli-blueprint");
    const r = await named.execute("echo out; echo err >&2; exit 4");
    assert.deepEqual(r, { output: "out\nerr\n", exitCode: 4, truncated: false });
    for (const x of [a, b, named]) await x.delete();
  });

  test("a refused key: the error names SANDBOX_C_API_KEY and never quotes the key", async () => {
    const wrong = `ak_wrong_${crypto.randomUUID()}`;
    await assert.rejects(create({ env: envOf(standIn, wrong) }), (err: Error) => {
      assert.match(err.message, /Runloop refused the API key in SANDBOX_C_API_KEY \(401/);
      assert.ok(!err.message.includes(wrong));
      return true;
    });
  });

  test("an unknown blueprint is a start-up error naming [sandbox].template", async () => {
    await assert.rejects(
      create({ template: "no-such-blueprint", env: envOf(standIn) }),
      /no built blueprint "no-such-blueprint" \(\[sandbox\]\.template\)/,
    );
  });

  test("an image Runloop cannot pull: a clear error naming [sandbox].image", async () => {
    const before = standIn.devboxes.size;
    await assert.rejects(
      create({ image: "no-such/image:1", env: envOf(standIn) }),
      /could not build a blueprint from image "no-such\/image:1" \(\[sandbox\]\.image\)[\s\S]*build_failed/,
    );
    assert.equal(standIn.devboxes.size, before, "no devbox was made");
  });

  test("quota exceeded is a clear error saying so", async () => {
    const small = await startRunloopStandIn({ apiKey: KEY, maxDevboxes: 1 });
    try {
      const first = await create({ env: envOf(small) });
      await assert.rejects(
        create({ key: "thread:t-2", env: envOf(small) }),
        /Runloop quota exceeded \(403 Devbox limit exceeded/,
      );
      await first.delete();
    } finally {
      await small.close();
    }
  });

  test("an unreachable API names SANDBOX_C_API_URL", async () => {
    await assert.rejects(
      create({ env: { SANDBOX_C_API_KEY: KEY, SANDBOX_C_API_URL: "http://127.0.0.1:9" } }),
      /cannot reach Runloop at http:\/\/127\.0\.0\.1:9[\s\S]*SANDBOX_C_API_URL/,
    );
  });

  test("a devbox shut down behind our back is reported as gone (the server then makes a new one, with a note)", async () => {
    const box = await create({ env: envOf(standIn) });
    await box.execute("true");
    const other = await create({ sandboxId: box.id, env: envOf(standIn) });
    await other.delete();
    await assert.rejects(box.execute("true"), (err: unknown) => isSandboxNotFound(err));
    await assert.rejects(create({ sandboxId: box.id, env: envOf(standIn) }), (err: unknown) => isSandboxNotFound(err));
    await box.delete();
  });

  test("stop suspends the devbox; the next use resumes it with its files", async () => {
    const box = await create({ env: envOf(standIn) });
    await box.execute("echo kept > /workspace/k.txt");
    await box.stop!();
    assert.equal(standIn.devboxes.get(box.id)!.status, "suspended");
    const again = await create({ sandboxId: box.id, env: envOf(standIn) });
    assert.equal((await again.execute("cat /workspace/k.txt")).output, "kept\n");
    assert.equal(standIn.devboxes.get(box.id)!.status, "running");
    await again.delete();
  });
});

keyStaysOutOfToolResults({ provider: "sandbox_c", keyVar: "SANDBOX_C_API_KEY", env: (key) => envOf(standIn, key) });
