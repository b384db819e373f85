/**
 * examples/langgraph-js deployed to the local control plane, through the real processes:
 * `agentcli platform serve`, then `agentcli deploy` from a copy of the example with no
 * node_modules (a deployment installs nothing: the revision process lends the graphs its own
 * @langchain/*, hono and zod). The dry run lists the graphs and none of a deep agent's parts;
 * the deployed graphs run under LangGraph's SDK with langgraph.json's env object, the
 * http.app's route and middleware answer, and the UI components are served. A project whose package.json needs another package is
 * refused by `deploy`, and its bundle, uploaded anyway, ends BUILD_FAILED naming the package.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../../plugins/compute/revision-process.ts";
import { until } from "../platform/_harness.ts";
import { ROOT } from "./_dev.ts";

let server: ChildProcess | null = null;
let output = "";
let base = "";
let key = "";
const dataDir = mkdtempSync(join(tmpdir(), "agentcli-lg-deploy-"));
const projects: string[] = [];

/** A copy of examples/langgraph-js (no node_modules), `change` applied to it. */
function project(change: (dir: string) => void = () => {}): string {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-lg-deploy-project-"));
  cpSync(join(ROOT, "examples/langgraph-js"), dir, {
    recursive: true,
    filter: (p) => !p.includes("/node_modules") && !p.includes("/.agentcli"),
  });
  change(dir);
  projects.push(dir);
  return dir;
}

/** `agentcli <args>` in `cwd` with the control plane's key; its exit code and output. */
function agentcli(cwd: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/agentcli.js"), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PLATFORM_API_KEY: key },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ code, output: out }));
  });
}

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return await res.json();
}

before(async () => {
  const port = await freePort("127.0.0.1");
  server = spawn(process.execPath, [
    join(ROOT, "bin/agentcli.js"),
    "platform",
    "serve",
    "--port",
    String(port),
    "--data-dir",
    dataDir,
  ], { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" }, stdio: ["ignore", "pipe", "pipe"] });
  server.stdout!.on("data", (d) => (output += d));
  server.stderr!.on("data", (d) => (output += d));
  base = `http://127.0.0.1:${port}`;
  key = await until(
    async () =>
      output.match(/\n\s+(acp_[A-Za-z0-9_-]+)\n/)?.[1] ??
        (server!.exitCode !== null ? Promise.reject(new Error(output)) : null),
    "bootstrap key",
    600,
  );
  await until(async () => (await fetch(`${base}/ok`).then((r) => r.ok, () => false)), "control plane /ok", 600);
});

after(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  for (const dir of [dataDir, ...projects]) rmSync(dir, { recursive: true, force: true });
});

describe("examples/langgraph-js deployed to the local control plane", () => {
  test("the dry run lists the graphs and no deep-agent parts", async () => {
    const dir = project();
    const dry = await agentcli(dir, ["deploy", "--platform-url", base, "--dry-run"]);
    assert.equal(dry.code, 0, dry.output);
    assert.match(
      dry.output,
      /Graphs:\s*\n\s+- chat \(src\/chat\.ts:graph\)\n\s+- counter \(src\/counter\.ts:makeGraph\)/,
    );
    assert.match(dry.output, /Requires:\s+@langchain\/langgraph, @langchain\/langgraph-sdk, hono\n/);
    for (const line of ["Model:", "Skills:", "Subagents:", "Sandbox:", "MCP servers:", "Approvals:", "Frontend:"]) {
      assert.ok(!dry.output.includes(line), `${line} in\n${dry.output}`);
    }
    assert.ok(!dry.output.includes("would refuse"), dry.output);
  });

  test("deploys; the revision loads the graphs with agentcli's packages and serves them to the SDK", async () => {
    const dir = project();
    const deployed = await agentcli(dir, ["deploy", "--platform-url", base, "--yes"]);
    assert.equal(deployed.code, 0, deployed.output + output);
    assert.match(deployed.output, /Deployed "langgraph-js-example" to platform: revision \S+ is DEPLOYED/);
    const url = deployed.output.match(/URL: (\S+)/)?.[1];
    assert.ok(url, deployed.output);
    // The platform key, and the example's own token for when its custom auth is served.
    const headers = { "x-api-key": key, authorization: "Bearer token-alice" };
    const client = new Client({ apiUrl: url, apiKey: key, defaultHeaders: headers, callerOptions: { maxRetries: 0 } });
    const assistants = await client.assistants.search({ limit: 10 });
    assert.deepEqual(assistants.map((a) => a.graph_id).sort(), ["chat", "counter"]);
    const thread = await client.threads.create();
    const chat = await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "ping" }] },
    }) as { messages: Array<{ content: string }>; turns: number };
    // GREETING comes from langgraph.json's env object, bundled with the project.
    assert.equal(chat.messages.at(-1)!.content, "Hello! You said: ping");
    const state = await client.threads.getState(thread.thread_id);
    assert.equal((state.values as { turns: number }).turns, 1);
    // The UI message the graph pushed, and its component, built by the revision process.
    const ui = (state.values as { ui: Array<{ name: string; props: unknown }> }).ui;
    assert.deepEqual(ui.map((m) => [m.name, m.props]), [["greeting", { who: "ping" }]]);
    const html = await (await fetch(`${url}/ui/chat`, { method: "POST", body: '{"name":"greeting"}' })).text();
    const script = html.match(/<script src="([^"]+)"/)?.[1];
    assert.ok(script?.startsWith(`${url}/ui/chat/`), html);
    assert.match(await (await fetch(script!)).text(), /__LGUI_chat/);
    const counter = await client.runs.wait(null, "counter", {
      input: { count: 1 },
      config: { configurable: { step: 3 } },
    });
    assert.deepEqual(counter, { count: 4 });
    const hello = await fetch(`${url}/hello`, { headers });
    assert.deepEqual(await hello.json(), { hello: "Hello" });
    // The http.app's middleware wraps the API's answers.
    const search = await fetch(`${url}/assistants/search`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(search.status, 200);
    assert.equal(search.headers.get("x-example"), "langgraph-js");
  });

  test("a project needing a package a deployment lacks is refused by deploy and by the build", async () => {
    const dir = project((d) => {
      const pkg = JSON.parse(readFileSync(join(d, "package.json"), "utf8"));
      pkg.dependencies["left-pad"] = "1.3.0";
      writeFileSync(join(d, "package.json"), JSON.stringify(pkg, null, 2));
    });
    const dry = await agentcli(dir, ["deploy", "--platform-url", base, "--dry-run"]);
    assert.equal(dry.code, 0, dry.output);
    assert.match(
      dry.output,
      /A real deploy would refuse:\n\s+- Cannot deploy the project of langgraph\.json: .*"left-pad"/,
    );
    const refused = await agentcli(dir, ["deploy", "--platform-url", base, "--yes"]);
    assert.equal(refused.code, 1, refused.output);
    assert.match(
      refused.output,
      /error: Cannot deploy the project of langgraph\.json: its dependencies need "left-pad"/,
    );
    assert.match(refused.output, /hint: Remove them from the "dependencies"/);
    assert.ok(!refused.output.includes("Creating deployment"), refused.output);
    // The bundle the dry run wrote, uploaded by another client: the control plane's build refuses it.
    const d = await api("POST", "/v2/deployments", { name: "lg-left-pad", source: "internal_source" });
    const u = await api("POST", `/v2/deployments/${d.id}/upload-url`);
    const bundle = readFileSync(join(dir, ".agentcli/bundle.tgz"));
    assert.equal((await fetch(u.upload_url, { method: "PUT", body: bundle })).status, 200);
    const p = await api("PATCH", `/v2/deployments/${d.id}`, {
      source_revision_config: { source_tarball_path: u.object_path },
    });
    const r = await until(async () => {
      const rev = await api("GET", `/v2/deployments/${d.id}/revisions/${p.latest_revision_id}`);
      return ["BUILD_FAILED", "DEPLOYED", "DEPLOY_FAILED"].includes(rev.status) ? rev : null;
    }, "the revision's end");
    assert.equal(r.status, "BUILD_FAILED");
    assert.match(r.status_message, /its dependencies need "left-pad", which a deployment does not install/);
  });
});
