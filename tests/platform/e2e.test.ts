/**
 * End to end, through the real processes: `agentcli platform serve` (local listener), then
 * `agentcli deploy` of the example project (a copy of examples/research); the deployment's URL
 * answers `/ok` and the Agent API (LangGraph SDK); a second deploy switches with no failed
 * request while a client polls `/ok` and the Agent API throughout; a broken bundle ends
 * BUILD_FAILED and leaves the live revision serving; a rollback makes the first revision's
 * content live again (read from the A2A card, which reflects the running bundle); a deploy of a
 * project that needs a plugin the control plane lacks ends BUILD_FAILED and `deploy` shows why
 * and the build logs, exiting non-zero. A deployment with `[sandbox] provider = "platform"` runs
 * its agent's `execute` in a sandbox of the control plane it was deployed to, and deleting the
 * deployment deletes that sandbox.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client";
import { notABundle, type PlatformServe, startPlatformServe, until } from "./_harness.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let server: PlatformServe | null = null;
let base = "";
let key = "";
let dataDir = "";
let project = "";

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Deploys the project with `version` in its AGENTS.md and in its review skill's description. */
function deploy(version: string, before: string[] = []): Promise<{ code: number | null; output: string }> {
  writeFileSync(join(project, "AGENTS.md"), `# ${version}\n`);
  const skill = join(project, "skills/review/SKILL.md");
  writeFileSync(
    skill,
    readFileSync(skill, "utf8").replace(/^description: .*$/m, `description: Review a draft, ${version}.`),
  );
  return new Promise((resolve) => {
    // --yes: the example is [auth] provider = "anonymous", which asks for a confirmation.
    const child = spawn(process.execPath, [
      join(ROOT, "bin/agentcli.js"),
      ...before,
      "deploy",
      "--platform-url",
      base,
      "--yes",
    ], {
      cwd: project,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PLATFORM_API_KEY: key },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ code, output: out }));
  });
}

/** Starts `agentcli platform serve` (embedded database, or PostgreSQL at `databaseUrl`) and a copy of the example project. */
async function startServer(databaseUrl?: string): Promise<void> {
  dataDir = mkdtempSync(join(tmpdir(), "agentcli-platform-e2e-"));
  project = mkdtempSync(join(tmpdir(), "agentcli-platform-e2e-project-"));
  cpSync(join(ROOT, "examples/research"), project, { recursive: true });
  // A model key is needed to deploy; no model is called here.
  writeFileSync(join(project, ".env"), "OPENAI_API_KEY=sk-e2e-not-a-real-key\n");
  server = await startPlatformServe({
    dataDir,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
  });
  base = server.url;
  key = server.key ?? assert.fail(`no bootstrap key:\n${server.output()}`);
}

async function stopServer(): Promise<void> {
  await server?.stop();
  server = null;
  if (project) rmSync(project, { recursive: true, force: true });
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

after(stopServer);

/** The live revision's `review` skill description, from its A2A agent card (the card reads the running bundle). */
async function liveSkill(url: string): Promise<string> {
  const card = await new DefaultAgentCardResolver().resolve(url);
  return card.skills.find((x) => x.id === "review")?.description ?? "";
}

async function scenario(storage?: (deploymentId: string, present: boolean) => Promise<void>): Promise<void> {
  const first = await deploy("Version one");
  assert.equal(first.code, 0, first.output + server!.output());
  assert.match(first.output, /DEPLOYED/);
  assert.match(first.output, /Deployed "research-assistant"/);
  const url = first.output.match(/URL: (\S+)/)?.[1];
  assert.ok(url, first.output);
  assert.equal((await fetch(`${url}/ok`)).status, 200);
  // [auth] provider = "anonymous": no key needed.
  const client = new Client({ apiUrl: url });
  const assistants = await client.assistants.search({ limit: 10 });
  assert.ok(assistants.length >= 1);
  const thread = await client.threads.create({ metadata: { from: "e2e" } });
  assert.ok(thread.thread_id);
  assert.equal(await liveSkill(url), "Review a draft, Version one.");
  const deployment = (await api("GET", "/v2/deployments?name_contains=research-assistant")).body.resources[0];
  const firstRevision = deployment.active_revision_id;
  const secretNames = deployment.secrets.map((x: { name: string }) => x.name).sort();
  // [auth] anonymous: the control-plane key deploy used is not shipped (issue 31, item 5).
  assert.deepEqual(secretNames, ["OPENAI_API_KEY"], ".env values become deployment secrets, and nothing else");
  assert.ok(!JSON.stringify(deployment).includes("sk-e2e-not-a-real-key"));

  let polling = true;
  let ok = 0;
  const failures: string[] = [];
  const poller = (async () => {
    for (let i = 0; polling; i++) {
      try {
        const r = i % 2
          ? await fetch(`${url}/assistants/search`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: "{}",
          })
          : await fetch(`${url}/ok`);
        await r.body?.cancel();
        if (r.status === 200) ok++;
        else failures.push(`HTTP ${r.status}`);
      } catch (err) {
        failures.push(String(err));
      }
    }
  })();
  const second = await deploy("Version two");
  polling = false;
  await poller;
  assert.equal(second.code, 0, second.output);
  assert.deepEqual(failures, []);
  assert.ok(ok > 0);
  const afterSecond = (await api("GET", `/v2/deployments/${deployment.id}`)).body;
  assert.notEqual(afterSecond.active_revision_id, firstRevision);
  assert.equal(afterSecond.url, url, "the stable URL does not change");
  const revisions = (await api("GET", `/v2/deployments/${deployment.id}/revisions`)).body.resources;
  assert.equal(revisions.length, 2, "each deploy makes a revision");
  const superseded = revisions.find((r: { id: string }) => r.id === firstRevision);
  assert.deepEqual([superseded.status, superseded.status_message], [
    "INTERRUPTED",
    `superseded by revision ${afterSecond.active_revision_id}`,
  ], "only the serving revision is DEPLOYED");
  assert.equal(await liveSkill(url), "Review a draft, Version two.", "the new revision serves");

  const upload = (await api("POST", `/v2/deployments/${deployment.id}/upload-url`)).body;
  assert.equal(
    (await fetch(upload.upload_url, { method: "PUT", body: notABundle() as Uint8Array<ArrayBuffer> })).status,
    200,
  );
  const broken = (await api("PATCH", `/v2/deployments/${deployment.id}`, {
    source_revision_config: { source_tarball_path: upload.object_path },
  })).body;
  const brokenRev = await until(async () => {
    const r = (await api("GET", `/v2/deployments/${deployment.id}/revisions/${broken.latest_revision_id}`)).body;
    return ["BUILD_FAILED", "DEPLOYED"].includes(r.status) ? r : null;
  }, "broken build");
  assert.equal(brokenRev.status, "BUILD_FAILED");
  assert.equal(
    (await api("GET", `/v2/deployments/${deployment.id}`)).body.active_revision_id,
    afterSecond.active_revision_id,
  );
  assert.equal((await fetch(`${url}/ok`)).status, 200);

  const rollback = await api("POST", `/v2/deployments/${deployment.id}/revisions/${firstRevision}/redeploy`);
  assert.equal(rollback.status, 201);
  const rolled = await until(async () => {
    const r = (await api("GET", `/v2/deployments/${deployment.id}/revisions/${rollback.body.id}`)).body;
    return ["DEPLOYED", "DEPLOY_FAILED", "BUILD_FAILED"].includes(r.status) ? r : null;
  }, "rollback");
  assert.equal(rolled.status, "DEPLOYED", rolled.status_message);
  assert.equal((await api("GET", `/v2/deployments/${deployment.id}`)).body.active_revision_id, rollback.body.id);
  assert.equal((await fetch(`${url}/ok`)).status, 200);
  assert.equal(
    await liveSkill(url),
    "Review a draft, Version one.",
    "the rollback serves the first revision's content",
  );
  const bundle = await fetch(`${base}/v2/deployments/${deployment.id}/revisions/${rollback.body.id}/bundle`, {
    headers: { "x-api-key": key },
  });
  assert.equal(bundle.status, 200);
  const { readBundle } = await import("../../core/bundle/bundle.ts");
  const { bundleText } = await import("../../core/bundle/types.ts");
  assert.equal(
    bundleText(await readBundle(new Uint8Array(await bundle.arrayBuffer())), "AGENTS.md"),
    "# Version one\n",
    "the rollback reuses the first revision's build",
  );

  // A project using a third-party sandbox plugin (loaded with --plugin) the control plane does not have.
  writeFileSync(
    join(project, "box.mjs"),
    `export default { name: "my-sandbox", kind: "sandbox", sandbox: { provider: "my_box", env: ["MY_BOX_KEY"], partnerPackage: "my-box", defaultTemplate: "t", capabilities: { persistentFiles: true, network: false, gpu: false } } };`,
  );
  writeFileSync(
    join(project, "agent.toml"),
    `${readFileSync(join(project, "agent.toml"), "utf8")}\n[sandbox]\nprovider = "my_box"\n`,
  );
  writeFileSync(join(project, ".env"), "OPENAI_API_KEY=sk-e2e-not-a-real-key\nMY_BOX_KEY=box-secret\n");
  const failing = await deploy("Version three", ["--plugin", "box.mjs"]);
  assert.notEqual(failing.code, 0, failing.output);
  assert.match(failing.output, /BUILD_FAILED/);
  assert.match(
    failing.output,
    /ended BUILD_FAILED: bundle "research-assistant" needs the plugin "my-sandbox", which this control plane does not have/,
  );
  assert.match(failing.output, /logs:\n\s+\[build\] unpacking upload/, "the build logs are shown");
  assert.ok(!failing.output.includes("box-secret"));
  assert.equal(
    (await api("GET", `/v2/deployments/${deployment.id}`)).body.active_revision_id,
    rollback.body.id,
    "the live revision keeps serving",
  );
  assert.equal(await liveSkill(url), "Review a draft, Version one.");

  // Delete: teardown stops the revision, drops its storage, and the URL goes away.
  await storage?.(deployment.id, true);
  assert.equal((await api("DELETE", `/v2/deployments/${deployment.id}`)).status, 202);
  await until(async () => (await api("GET", `/v2/deployments/${deployment.id}`)).status === 404, "deletion");
  assert.notEqual(await fetch(`${url}/ok`).then((r) => r.status, () => 0), 200);
  await storage?.(deployment.id, false);
}

test("embedded database: deploy the example, switch with no failed request, broken build, rollback, BUILD_FAILED shown by deploy, delete", async () => {
  await startServer();
  try {
    await scenario();
  } finally {
    await stopServer();
  }
});

test("PostgreSQL (a schema per deployment, old and new revisions overlap): the same scenario", async () => {
  const { openSql } = await import("../../core/storage/sql.ts");
  const root = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const schema = `platform_e2e_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = await openSql({ url: root, poolSize: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(root);
  url.searchParams.set("options", `-c search_path=${schema}`);
  try {
    await startServer(url.toString());
    await scenario(async (id, present) => {
      const { rows } = await admin.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [
        `agentcli_d_${id.replace(/-/g, "")}`,
      ]);
      assert.equal(
        rows.length,
        present ? 1 : 0,
        present ? "the deployment's schema exists" : "teardown dropped the deployment's schema",
      );
    });
  } finally {
    await stopServer();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.close();
  }
});

test('a deployment with [sandbox] provider = "platform" runs execute in a sandbox of the control plane it was deployed to', async () => {
  const model = await startModelServer();
  await startServer();
  try {
    writeFileSync(
      join(project, "agent.toml"),
      `${readFileSync(join(project, "agent.toml"), "utf8")}\n[sandbox]\nprovider = "platform"\n`,
    );
    writeFileSync(
      join(project, ".env"),
      `OPENAI_API_KEY=sk-e2e-not-a-real-key\nOPENAI_BASE_URL=${model.openaiBaseUrl}\n`,
    );
    const deployed = await deploy("Sandboxed");
    assert.equal(deployed.code, 0, deployed.output + server!.output());
    const url = deployed.output.match(/URL: (\S+)/)?.[1];
    assert.ok(url, deployed.output);
    model.script({
      toolCalls: [{ name: "execute", args: { command: "echo made-in-$(pwd) > note.txt; cat note.txt" } }],
    }, { text: "done" });
    const client = new Client({ apiUrl: url });
    const [assistant] = await client.assistants.search({ limit: 1 });
    const thread = await client.threads.create();
    const state = await client.runs.wait(thread.thread_id, assistant!.assistant_id, {
      input: { messages: [{ role: "user", content: "run it" }] },
    }) as { messages: Array<{ type: string; content: unknown }> };
    const tool = state.messages.find((m) => m.type === "tool");
    assert.match(String(tool?.content), /made-in-\/workspace/, JSON.stringify(state.messages));
    const boxes = (await api("GET", "/v2/sandboxes/boxes")).body.sandboxes as Array<{ name: string }>;
    assert.equal(boxes.length, 1, "the deployment's thread has one sandbox on this control plane");
    const deployment = (await api("GET", "/v2/deployments?name_contains=research-assistant")).body.resources[0];
    assert.equal((await api("DELETE", `/v2/deployments/${deployment.id}`)).status, 202);
    await until(async () => (await api("GET", `/v2/deployments/${deployment.id}`)).status === 404, "deletion");
    assert.deepEqual(
      (await api("GET", "/v2/sandboxes/boxes")).body.sandboxes,
      [],
      "deleting the deployment deletes its sandboxes",
    );
  } finally {
    await stopServer();
    await model.close();
  }
});
