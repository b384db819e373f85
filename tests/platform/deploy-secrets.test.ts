/**
 * Deploy ships only what the user named (issue 31, item 5): `deploy --dry-run` lists exactly
 * the secrets the deployment then stores, and the tenant's control-plane key
 * (`PLATFORM_API_KEY`) is stored only when the project needs it at run time (no `[auth]`
 * section: the agent checks `x-api-key` against it), with the dry run saying why; otherwise
 * it is kept out even when `.env` holds it, and the dry run says so. The CLI runs as a process
 * against a control plane on a real port; the compute is a recording one (the `computeFor`
 * seam), so what a rollout receives is checked too.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, test } from "node:test";
import { CLI, makeProject, removeProject } from "../toolchain/_project.ts";
import { RecordingCompute, startTestPlatform, type TestPlatform } from "./_harness.ts";

const compute = new RecordingCompute();
let t: TestPlatform;
let base = "";
before(async () => {
  t = await startTestPlatform({ computeFor: () => compute });
  base = (await t.platform.listen({ port: 0 })).url;
  t.platform.services.publicUrl = base;
});
after(() => t?.close());

/** The CLI as a process (asynchronous: the control plane answers from this process meanwhile). */
function cli(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", AGENTCLI_PLATFORM_URL: base, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => (stdout += b));
    child.stderr.on("data", (b) => (stderr += b));
    child.once("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Dry run (text and JSON), then the real deploy; answers what each said and what was stored. */
async function dryRunThenDeploy(files: Record<string, string>, env: Record<string, string>, extra: string[] = []) {
  const dir = makeProject(files);
  try {
    const text = await cli(["deploy", "--dry-run"], dir, env);
    assert.equal(text.code, 0, text.stdout + text.stderr);
    const json = await cli(["deploy", "--dry-run", "--json"], dir, env);
    assert.equal(json.code, 0, json.stderr);
    const summary = JSON.parse(json.stdout);
    const real = await cli(["deploy", ...extra], dir, env);
    assert.equal(real.code, 0, real.stdout + real.stderr);
    const name = files["agent.toml"]!.match(/name = "([^"]+)"/)![1]!;
    const d = (await t.call("GET", `/v2/deployments?name_contains=${name}`)).body.resources.find((
      x: { name: string },
    ) => x.name === name);
    const rollout = compute.rollouts.find((r) => r.deployment.id === d.id)!;
    assert.ok(rollout, "the revision was rolled out");
    return {
      text: text.stdout,
      summary,
      stored: d.secrets.map((s: { name: string }) => s.name).sort(),
      rollout,
      output: text.stdout + text.stderr + json.stdout + real.stdout + real.stderr,
    };
  } finally {
    removeProject(dir);
  }
}

const DOTENV = "OPENAI_API_KEY=sk-dotenv-value\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\n";

test("no [auth]: the control-plane key is needed (x-api-key), listed with the reason, and stored", async () => {
  const r = await dryRunThenDeploy(
    { "agent.toml": '[agent]\nname = "keyed"\nmodel = "openai:gpt-5"\n', ".env": DOTENV },
    { PLATFORM_API_KEY: t.keyA },
  );
  assert.match(
    r.text,
    /Secrets: +OPENAI_API_KEY, OPENAI_BASE_URL, PLATFORM_API_KEY \(stored as the deployment's secrets; values never printed\)/,
  );
  assert.match(
    r.text,
    /\n {2}- PLATFORM_API_KEY: no \[auth\] section: the deployed agent checks each request's x-api-key against it/,
  );
  assert.deepEqual(r.summary.secrets, ["OPENAI_API_KEY", "OPENAI_BASE_URL", "PLATFORM_API_KEY"]);
  assert.deepEqual(r.summary.secret_notes.map((n: { name: string; shipped: boolean }) => [n.name, n.shipped]), [[
    "PLATFORM_API_KEY",
    true,
  ]]);
  assert.deepEqual(r.stored, r.summary.secrets, "the deployment stores exactly what the dry run listed");
  assert.ok(!r.output.includes(t.keyA) && !r.output.includes("sk-dotenv-value"), "a secret value was printed");
});

test("[auth] set: the control-plane key in .env is kept out of the deployment, and the dry run says why", async () => {
  const r = await dryRunThenDeploy(
    {
      "agent.toml": '[agent]\nname = "unkeyed"\nmodel = "openai:gpt-5"\n[auth]\nprovider = "anonymous"\n',
      ".env": `${DOTENV}PLATFORM_API_KEY=${t.keyA}\n`,
    },
    {},
    ["--yes"],
  );
  assert.match(r.text, /Secrets: +OPENAI_API_KEY, OPENAI_BASE_URL \(/);
  assert.match(
    r.text,
    /\n {2}- PLATFORM_API_KEY \(in \.env\): kept out of the deployment: it is the deploy target's credential \(the control plane: .*\) and nothing in this project needs it at run time/,
  );
  assert.deepEqual(r.summary.secrets, ["OPENAI_API_KEY", "OPENAI_BASE_URL"]);
  assert.deepEqual(
    r.stored,
    ["OPENAI_API_KEY", "OPENAI_BASE_URL"],
    "the deployment stores exactly what the dry run listed",
  );
  assert.ok(
    !r.rollout.secrets.some((s) => s.name === "PLATFORM_API_KEY" || s.value === t.keyA),
    "the revision never receives the control-plane key",
  );
});

test('[sandbox] provider = "platform": the revision gets its own sandbox key, not the tenant\'s', async () => {
  const r = await dryRunThenDeploy(
    {
      "agent.toml":
        '[agent]\nname = "boxed"\nmodel = "openai:gpt-5"\n[sandbox]\nprovider = "platform"\n[auth]\nprovider = "anonymous"\n',
      ".env": `${DOTENV}PLATFORM_API_KEY=${t.keyA}\n`,
    },
    {},
    ["--yes"],
  );
  assert.match(
    r.text,
    /- PLATFORM_API_KEY \(in \.env\): kept out of the deployment: .*; the control plane gives each revision its own sandbox key \(AGENTCLI_PLATFORM_SANDBOX_KEY\)/,
  );
  assert.deepEqual(r.stored, ["OPENAI_API_KEY", "OPENAI_BASE_URL"]);
  assert.deepEqual(r.stored, r.summary.secrets);
  const given = new Map(r.rollout.secrets.map((s) => [s.name, s.value]));
  assert.ok(given.get("AGENTCLI_PLATFORM_SANDBOX_KEY"), "the platform sandbox has its deployment's own key");
  assert.notEqual(given.get("AGENTCLI_PLATFORM_SANDBOX_KEY"), t.keyA);
  assert.ok(!given.has("PLATFORM_API_KEY"));
});
