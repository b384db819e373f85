/**
 * End to end, through the real processes: `agentcli platform serve` (local listener), then
 * `agentcli deploy` of a project; the deployment's URL answers `/ok` and the Agent API; a
 * second deploy switches with no failed request while a client polls; a broken bundle ends
 * BUILD_FAILED and leaves the live revision serving; a rollback makes the first revision's
 * content live again.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../../core/platform/revision-process.ts";
import { makeProject, removeProject } from "../toolchain/_project.ts";
import { until } from "./_harness.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let server: ChildProcess | null = null;
let output = "";
let base = "";
let key = "";
let dataDir = "";
let project = "";

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, { method, headers: { "x-api-key": key, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

function deploy(agentsMd: string): Promise<{ code: number | null; output: string }> {
  writeFileSync(join(project, "AGENTS.md"), agentsMd);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/agentcli.js"), "deploy", "--platform-url", base], {
      cwd: project, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PLATFORM_API_KEY: key }, stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ code, output: out }));
  });
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agentcli-platform-e2e-"));
  project = makeProject({ "agent.toml": '[agent]\nname = "e2e-agent"\nmodel = "openai:gpt-5"\n' });
  const port = await freePort("127.0.0.1");
  server = spawn(process.execPath, [join(ROOT, "bin/agentcli.js"), "platform", "serve", "--port", String(port), "--data-dir", dataDir], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" }, stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout!.on("data", (d) => (output += d));
  server.stderr!.on("data", (d) => (output += d));
  base = `http://127.0.0.1:${port}`;
  key = await until(async () => output.match(/\n\s+(acp_[A-Za-z0-9_-]+)\n/)?.[1] ?? (server!.exitCode !== null ? Promise.reject(new Error(output)) : null), "bootstrap key", 600);
  await until(async () => (await fetch(`${base}/ok`).then((r) => r.ok, () => false)), "control plane /ok", 600);
});

after(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  if (project) removeProject(project);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test("deploy, switch with no failed request, broken build, rollback", async () => {
  const first = await deploy("# Version one\n");
  assert.equal(first.code, 0, first.output + output);
  assert.match(first.output, /DEPLOYED/);
  const url = first.output.match(/URL: (\S+)/)?.[1];
  assert.ok(url, first.output);
  assert.equal((await fetch(`${url}/ok`)).status, 200);
  const client = new Client({ apiUrl: url, defaultHeaders: { "x-api-key": key } });
  const assistants = await client.assistants.search({ limit: 10 });
  assert.ok(Array.isArray(assistants));
  const deployment = (await api("GET", "/v2/deployments?name_contains=e2e-agent")).body.resources[0];
  const firstRevision = deployment.active_revision_id;

  let polling = true;
  let ok = 0;
  const failures: string[] = [];
  const poller = (async () => {
    while (polling) {
      try {
        const r = await fetch(`${url}/ok`);
        await r.body?.cancel();
        if (r.status === 200) ok++;
        else failures.push(`HTTP ${r.status}`);
      } catch (err) {
        failures.push(String(err));
      }
    }
  })();
  const second = await deploy("# Version two\n");
  polling = false;
  await poller;
  assert.equal(second.code, 0, second.output);
  assert.deepEqual(failures, []);
  assert.ok(ok > 0);
  const afterSecond = (await api("GET", `/v2/deployments/${deployment.id}`)).body;
  assert.notEqual(afterSecond.active_revision_id, firstRevision);
  assert.equal(afterSecond.url, url, "the stable URL does not change");

  const upload = (await api("POST", `/v2/deployments/${deployment.id}/upload-url`)).body;
  await fetch(upload.upload_url, { method: "PUT", body: "not a bundle" });
  const broken = (await api("PATCH", `/v2/deployments/${deployment.id}`, { source_revision_config: { source_tarball_path: upload.object_path } })).body;
  const brokenRev = await until(async () => {
    const r = (await api("GET", `/v2/deployments/${deployment.id}/revisions/${broken.latest_revision_id}`)).body;
    return ["BUILD_FAILED", "DEPLOYED"].includes(r.status) ? r : null;
  }, "broken build");
  assert.equal(brokenRev.status, "BUILD_FAILED");
  assert.equal((await api("GET", `/v2/deployments/${deployment.id}`)).body.active_revision_id, afterSecond.active_revision_id);
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
});
