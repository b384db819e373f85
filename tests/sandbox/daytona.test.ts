/**
 * `sandbox_a` (Daytona) with the real `@daytonaio/sdk` and our plugin, against a local
 * stand-in speaking Daytona's REST API and toolbox (tests/fixtures/sandbox-vendors/daytona):
 * the shared conformance suite, then the vendor's failures (refused key, unknown snapshot or
 * image, quota, unreachable API), the labels, and the key never showing in what the agent sees.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Daytona } from "@daytonaio/sdk";
import { sandboxConformance } from "../../core/testing/sandbox-conformance.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import sandboxA from "../../plugins/sandbox/sandbox_a.ts";
import { type DaytonaStandIn, startDaytonaStandIn } from "../fixtures/sandbox-vendors/daytona/server.ts";
import { keyStaysOutOfToolResults } from "../fixtures/sandbox-vendors/key-leak.ts";
import { isSandboxNotFound, type Sandbox, type SandboxCreateOptions } from "../../core/kernel/hooks.ts";

const KEY = `dtn_${crypto.randomUUID().replace(/-/g, "")}`;
const standIn = await startDaytonaStandIn({ apiKey: KEY });
after(() => standIn.close());

sandboxConformance({
  name: "sandbox_a (Daytona stand-in)",
  provider: "sandbox_a",
  builtins: builtinPlugins,
  env: { SANDBOX_A_API_KEY: KEY, SANDBOX_A_API_URL: standIn.apiUrl },
  startModelServer,
  workdir: "/workspace",
});

const hook = sandboxA.hooks!["sandbox:create"]!;
const create = (o: Partial<SandboxCreateOptions> & { env: Record<string, string> }) =>
  hook({
    provider: "sandbox_a",
    key: "thread:t-1",
    scope: "thread",
    template: "agentcli-default",
    image: "python:3",
    ...o,
  }) as Promise<Sandbox>;
const envOf = (s: DaytonaStandIn, key = KEY) => ({ SANDBOX_A_API_KEY: key, SANDBOX_A_API_URL: s.apiUrl });

describe("sandbox_a (Daytona): labels, mapping and failures", () => {
  test("sandboxes are labelled with the deployment, scope and scope key, and can be listed by them with the SDK", async () => {
    const box = await create({
      key: "assistant:a-42",
      scope: "assistant",
      env: { ...envOf(standIn), AGENTCLI_DEPLOYMENT_ID: "dep-7" },
    });
    const meta = standIn.sandboxes.get(box.id)!;
    assert.equal(meta.labels["agentcli.deployment"], "dep-7");
    assert.equal(meta.labels["agentcli.scope"], "assistant");
    assert.equal(meta.labels["agentcli.scope-key"], "assistant:a-42");
    const daytona = new Daytona({ apiKey: KEY, apiUrl: standIn.apiUrl, useDeprecatedPolling: true });
    const found: string[] = [];
    for await (const b of daytona.list({ labels: { "agentcli.scope-key": "assistant:a-42" } })) found.push(b.id);
    assert.deepEqual(found, [box.id]);
    await box.delete();
  });

  test("template names a Daytona snapshot; the default template creates from the image", async () => {
    const fromImage = await create({ env: envOf(standIn) });
    assert.equal(standIn.sandboxes.get(fromImage.id)!.snapshot, null);
    const fromSnapshot = await create({ template: "agentcli-snapshot", env: envOf(standIn) });
    assert.equal(standIn.sandboxes.get(fromSnapshot.id)!.snapshot, "agentcli-snapshot");
    const body = standIn.requests.filter((r) => r.method === "POST" && r.path === "/api/sandbox").map((r) =>
      JSON.parse(r.body)
    );
    assert.ok(body.some((b) => /^FROM python:3\n/.test(b.buildInfo?.dockerfileContent ?? "")));
    assert.equal(
      (await fromSnapshot.execute("echo quoted 'it''s' \"a b\"; echo $((6*7))")).output,
      "quoted its a b\n42\n",
    );
    await fromImage.delete();
    await fromSnapshot.delete();
  });

  test("a refused key: the error names SANDBOX_A_API_KEY and never quotes the key", async () => {
    const wrong = `dtn_wrong_${crypto.randomUUID()}`;
    await assert.rejects(create({ env: envOf(standIn, wrong) }), (err: Error) => {
      assert.match(err.message, /Daytona refused the API key in SANDBOX_A_API_KEY \(401/);
      assert.ok(!err.message.includes(wrong));
      return true;
    });
  });

  test("an unknown snapshot is a start-up error naming [sandbox].template", async () => {
    await assert.rejects(
      create({ template: "no-such-snapshot", env: envOf(standIn) }),
      /no snapshot "no-such-snapshot" \(\[sandbox\]\.template\)/,
    );
  });

  test("an image Daytona cannot pull: a clear error, and the failed sandbox is deleted (no leak)", async () => {
    const before = standIn.sandboxes.size;
    await assert.rejects(
      create({ image: "no-such/image:1", env: envOf(standIn) }),
      /could not build it from image "no-such\/image:1" \(\[sandbox\]\.image\)[\s\S]*manifest unknown/,
    );
    const made = [...standIn.sandboxes.values()].slice(before);
    assert.equal(made.length, 1);
    assert.equal(made[0]!.state, "destroyed");
  });

  test("quota exceeded is a clear error saying so", async () => {
    const small = await startDaytonaStandIn({ apiKey: KEY, cpuQuota: 1 });
    try {
      const first = await create({ env: envOf(small) });
      await assert.rejects(
        create({ key: "thread:t-2", env: envOf(small) }),
        /Daytona quota exceeded \(403 Total CPU limit exceeded/,
      );
      await first.delete();
    } finally {
      await small.close();
    }
  });

  test("an unreachable API names SANDBOX_A_API_URL", async () => {
    await assert.rejects(
      create({ env: { SANDBOX_A_API_KEY: KEY, SANDBOX_A_API_URL: "http://127.0.0.1:9/api" } }),
      /cannot reach Daytona at http:\/\/127\.0\.0\.1:9\/api[\s\S]*SANDBOX_A_API_URL/,
    );
  });

  test("a sandbox deleted in Daytona behind our back is reported as gone (the server then makes a new one, with a note)", async () => {
    const box = await create({ env: envOf(standIn) });
    await box.execute("true");
    await standIn.deleteBehindTheBack(box.id);
    await assert.rejects(box.execute("true"), (err: unknown) => isSandboxNotFound(err));
    await assert.rejects(create({ sandboxId: box.id, env: envOf(standIn) }), (err: unknown) => isSandboxNotFound(err));
  });

  test("a stopped sandbox is started again before use; its files are kept", async () => {
    const box = await create({ env: envOf(standIn) });
    await box.execute("echo kept > /workspace/k.txt");
    await box.stop!();
    assert.equal(standIn.sandboxes.get(box.id)!.state, "stopped");
    const again = await create({ sandboxId: box.id, env: envOf(standIn) });
    assert.equal((await again.execute("cat /workspace/k.txt")).output, "kept\n");
    assert.equal(standIn.sandboxes.get(box.id)!.state, "started");
    await again.delete();
  });
});

keyStaysOutOfToolResults({ provider: "sandbox_a", keyVar: "SANDBOX_A_API_KEY", env: (key) => envOf(standIn, key) });
