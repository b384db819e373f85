/**
 * `sandbox_b` (Modal): the shared sandbox conformance suite (core/testing/sandbox-conformance.ts)
 * with Modal's real SDK and our plugin against a local stand-in speaking Modal's gRPC protocol
 * (tests/fixtures/sandbox-vendors/modal), which runs the commands with the bubblewrap runtime;
 * then Modal's failures as the user sees them, and the provider in `deploy`.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { sandboxConformance } from "../../core/testing/sandbox-conformance.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import sandboxB from "../../plugins/sandbox/sandbox_b.ts";
import { isSandboxNotFound, type Sandbox, type SandboxCreateOptions } from "../../core/kernel/hooks.ts";
import { type ModalStandIn, startModalStandIn } from "../fixtures/sandbox-vendors/modal/server.ts";
import { cli, makeProject, removeProject } from "../toolchain/_project.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AddressInfo, createServer } from "node:net";
import { Client } from "@langchain/langgraph-sdk";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { loadProject } from "../../core/config/load.ts";
import { buildBundle, readBundle } from "../../core/bundle/bundle.ts";
import { hostBundle } from "../../core/server/host/agent-host.ts";

const modal = await startModalStandIn();
after(() => modal.close());
const env = {
  SANDBOX_B_TOKEN_ID: modal.tokenId,
  SANDBOX_B_TOKEN_SECRET: modal.tokenSecret,
  SANDBOX_B_SERVER_URL: modal.url,
};

sandboxConformance({
  name: "sandbox_b (Modal SDK against the Modal stand-in)",
  provider: "sandbox_b",
  builtins: builtinPlugins,
  env,
  startModelServer,
  workdir: "/workspace",
  // Modal sandboxes reach the network; the stand-in's bubblewrap ones do not, which the suite then does not check.
  network: true,
});

const create = (over: Partial<SandboxCreateOptions> & { env: Record<string, string> }) =>
  sandboxB.hooks!["sandbox:create"]!({
    provider: "sandbox_b",
    key: "thread:t1",
    scope: "thread",
    template: "agentcli-default",
    image: "python:3",
    ...over,
  }) as Promise<Sandbox>;
/** The message of what `fn` throws. */
const failure = async (fn: () => Promise<unknown>): Promise<string> => {
  try {
    await fn();
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail("expected a failure");
};

describe("sandbox_b: Modal's failures are clear errors naming what to fix", () => {
  let strict: ModalStandIn;
  const secrets: string[] = [];
  before(async () => {
    strict = await startModalStandIn({ apps: ["my-app"], maxSandboxes: 1, unknownImages: /no-such/ });
    secrets.push(modal.tokenSecret, strict.tokenSecret, "as-wrong-secret-value", "ak-wrong-id-value");
  });
  after(() => strict.close());
  const strictEnv = () => ({
    SANDBOX_B_TOKEN_ID: strict.tokenId,
    SANDBOX_B_TOKEN_SECRET: strict.tokenSecret,
    SANDBOX_B_SERVER_URL: strict.url,
  });
  const noSecret = (message: string) => {
    for (const s of secrets) assert.ok(!message.includes(s), `"${message}" shows a token`);
  };

  test("a missing token names both variables", async () => {
    const message = await failure(() =>
      create({ env: { SANDBOX_B_TOKEN_ID: "ak-x", SANDBOX_B_SERVER_URL: strict.url } })
    );
    assert.match(message, /SANDBOX_B_TOKEN_SECRET is not set/);
    assert.match(
      await failure(() => create({ env: {} })),
      /SANDBOX_B_TOKEN_ID and SANDBOX_B_TOKEN_SECRET are not set.*modal token new/,
    );
  });

  test("a wrong token: Modal's refusal names the variables, and never shows the token (which the server echoed)", async () => {
    const message = await failure(() =>
      create({
        env: {
          SANDBOX_B_TOKEN_ID: "ak-wrong-id-value",
          SANDBOX_B_TOKEN_SECRET: "as-wrong-secret-value",
          SANDBOX_B_SERVER_URL: strict.url,
        },
      })
    );
    assert.match(message, /Modal rejected the token.*Check SANDBOX_B_TOKEN_ID and SANDBOX_B_TOKEN_SECRET/);
    assert.match(message, /\[redacted\]/);
    noSecret(message);
  });

  test("a bad or unreachable SANDBOX_B_SERVER_URL is named", async () => {
    assert.match(
      await failure(() => create({ env: { ...strictEnv(), SANDBOX_B_SERVER_URL: "api.modal.com" } })),
      /SANDBOX_B_SERVER_URL="api\.modal\.com" is not an http\(s\) URL/,
    );
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => resolve(port));
      });
    });
    const message = await failure(() =>
      create({ env: { ...strictEnv(), SANDBOX_B_SERVER_URL: `http://127.0.0.1:${closed}` } })
    );
    assert.match(message, new RegExp(`Cannot reach Modal at http://127\\.0\\.0\\.1:${closed}.*SANDBOX_B_SERVER_URL`));
    noSecret(message);
  });

  test("an unknown App ([sandbox].template) and an unknown image ([sandbox].image)", async () => {
    const app = await failure(() => create({ env: strictEnv(), template: "no-such-app" }));
    assert.match(app, /Modal has no App "no-such-app" \(\[sandbox\]\.template/);
    const image = await failure(() => create({ env: strictEnv(), template: "my-app", image: "no-such/image:1" }));
    assert.match(image, /Modal could not build \[sandbox\]\.image "no-such\/image:1".*manifest unknown/);
    noSecret(app + image);
  });

  test("quota exceeded; a sandbox Modal ended behind our back is not found (the server recreates it)", async () => {
    const first = await create({ env: strictEnv(), template: "my-app" });
    assert.deepEqual(strict.tagsOf(first.id), {
      "agentcli.deployment": "local",
      "agentcli.scope": "thread",
      "agentcli.scope-key": "thread:t1",
    });
    const quota = await failure(() => create({ env: strictEnv(), template: "my-app" }));
    assert.match(quota, /quota exceeded.*limit of 1 running sandboxes/);
    noSecret(quota);
    await strict.terminate(first.id);
    await assert.rejects(first.execute("true"), (err: unknown) => isSandboxNotFound(err));
    await assert.rejects(
      create({ env: strictEnv(), sandboxId: first.id }),
      (err: unknown) => isSandboxNotFound(err) && /has ended/.test((err as Error).message),
    );
    await assert.rejects(
      create({ env: strictEnv(), sandboxId: "sb-v2-unknown" }),
      (err: unknown) => isSandboxNotFound(err),
    );
    // The slot is free again.
    const second = await create({ env: strictEnv(), template: "my-app" });
    assert.deepEqual(strict.running(), [second.id]);
    await second.delete();
    assert.deepEqual(strict.running(), []);
  });
});

test("a refused token through the server: the tool result names the variables; neither it nor the log shows the token", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-modal-token-"));
  const model = await startModelServer();
  const wrongSecret = `as-wrong-${crypto.randomUUID()}`;
  const lines: string[] = [];
  const capture = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  const consoleError = console.error;
  console.error = capture;
  try {
    writeFileSync(
      join(dir, "agent.toml"),
      '[agent]\nname = "modal-token"\nmodel = "openai:gpt-test"\n\n[sandbox]\nprovider = "sandbox_b"\n',
    );
    writeFileSync(join(dir, "AGENTS.md"), "Run commands.\n");
    const driver = new PluginDriver([...builtinPlugins]);
    const envOf = {
      OPENAI_API_KEY: "k",
      OPENAI_BASE_URL: model.openaiBaseUrl,
      ...env,
      SANDBOX_B_TOKEN_SECRET: wrongSecret,
    };
    const project = await loadProject(join(dir, "agent.toml"), { driver, env: envOf, requireEnv: false, cwd: dir });
    const bundle = await readBundle((await buildBundle(project, { driver, version: "test" })).bytes);
    const log = { info: capture, warn: capture, error: capture };
    const host = await hostBundle({
      bundle,
      driver,
      env: project.env,
      mode: "dev",
      dataDir: join(dir, "data"),
      port: 0,
      host: "127.0.0.1",
      log,
    });
    try {
      const client = new Client({
        apiUrl: `http://127.0.0.1:${host.listening.port}`,
        callerOptions: { maxRetries: 0 },
      });
      const thread = await client.threads.create();
      model.script({ toolCalls: [{ name: "execute", args: { command: "echo hi" } }] }, { text: "done" });
      const state = (await client.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: "go" }] },
      })) as { messages: Array<{ type: string; content: unknown }> };
      const tool = JSON.stringify(state.messages.filter((m) => m.type === "tool"));
      assert.match(tool, /Modal rejected the token.*SANDBOX_B_TOKEN_ID and SANDBOX_B_TOKEN_SECRET/);
      for (const secret of [wrongSecret, modal.tokenId]) {
        assert.ok(!tool.includes(secret), "the tool result shows the token");
        assert.ok(!lines.some((l) => l.includes(secret)), "the log shows the token");
        assert.ok(!JSON.stringify(model.requests).includes(secret), "the model was sent the token");
      }
    } finally {
      await host.close();
    }
  } finally {
    console.error = consoleError;
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("sandbox_b in deploy", () => {
  const toml = '[agent]\nname = "fixture"\nmodel = "openai:gpt-5"\n\n[sandbox]\nprovider = "sandbox_b"\n';

  test("a dry run names the partner package `modal` and lists the missing token variables; a real deploy refuses", () => {
    const dir = makeProject({ "agent.toml": toml });
    try {
      const dry = cli(["deploy", "--dry-run", "--json"], { cwd: dir });
      assert.equal(dry.code, 0, dry.stderr);
      const summary = JSON.parse(dry.stdout) as { missing_env: string[] } & Record<string, unknown>;
      assert.match(JSON.stringify(summary), /"modal"/);
      assert.ok(
        summary.missing_env.some((m) => /SANDBOX_B_TOKEN_ID.*SANDBOX_B_TOKEN_SECRET/.test(m)),
        JSON.stringify(summary.missing_env),
      );
      const text = cli(["deploy", "--dry-run"], { cwd: dir });
      assert.match(text.stdout, /\bmodal\b/);
      assert.match(text.stdout, /A real deploy would refuse[\s\S]*SANDBOX_B_TOKEN_ID/);
      const real = cli(["deploy"], {
        cwd: dir,
        env: { PLATFORM_API_KEY: "k", AGENTCLI_PLATFORM_URL: "http://127.0.0.1:9" },
      });
      assert.notEqual(real.code, 0);
      assert.match(real.stderr, /SANDBOX_B_TOKEN_ID, SANDBOX_B_TOKEN_SECRET/);
    } finally {
      removeProject(dir);
    }
  });
});
