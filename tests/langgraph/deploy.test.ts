/**
 * examples/langgraph-js deployed to the local control plane, through the real processes:
 * `agentcli platform serve`, then `agentcli deploy` from a copy of the example with no
 * node_modules (its dependencies are all lent, so the build installs nothing: the revision
 * process lends the graphs its own @langchain/*, hono and zod). The dry run lists the graphs
 * and none of a deep agent's parts; the deployed graphs run under LangGraph's SDK with
 * langgraph.json's env object, the http.app's route and middleware answer, and the UI
 * components are served. A deploy target that installs no packages (docker) refuses a project
 * needing another package. (A control plane installing one: ./deploy-packages.test.ts.)
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { deployedClient, type DeployPlatform, startDeployPlatform, userHeaders } from "./_deploy.ts";
import { ROOT } from "./_dev.ts";

let cp: DeployPlatform;
const EXAMPLE = join(ROOT, "examples/langgraph-js");
const project = (change?: (dir: string) => void) => cp.project(EXAMPLE, change);
const agentcli = (cwd: string, args: string[]) => cp.agentcli(cwd, args);

before(async () => {
  cp = await startDeployPlatform();
});
after(async () => await cp?.close());

describe("examples/langgraph-js deployed to the local control plane", () => {
  test("the dry run lists the graphs and no deep-agent parts", async () => {
    const dir = project();
    const dry = await agentcli(dir, ["deploy", "--platform-url", cp.base, "--dry-run"]);
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
    const deployed = await agentcli(dir, ["deploy", "--platform-url", cp.base, "--yes"]);
    assert.equal(deployed.code, 0, deployed.output + cp.output());
    assert.match(deployed.output, /Deployed "langgraph-js-example" to platform: revision \S+ is DEPLOYED/);
    const url = deployed.output.match(/URL: (\S+)/)?.[1];
    assert.ok(url, deployed.output);
    // The platform key, and the example's own token for when its custom auth is served.
    const headers = userHeaders(cp);
    const client = deployedClient(cp, url);
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

  test("a target that installs no packages (docker) refuses a project needing one agentcli does not lend", async () => {
    const dir = project((d) => {
      const pkg = JSON.parse(readFileSync(join(d, "package.json"), "utf8"));
      pkg.dependencies["left-pad"] = "1.3.0";
      writeFileSync(join(d, "package.json"), JSON.stringify(pkg, null, 2));
    });
    // The control plane installs it: no refusal.
    const dry = await agentcli(dir, ["deploy", "--platform-url", cp.base, "--dry-run"]);
    assert.equal(dry.code, 0, dry.output);
    assert.ok(!dry.output.includes("would refuse"), dry.output);
    const docker = await agentcli(dir, ["deploy", "--target", "docker", "--dry-run"]);
    assert.equal(docker.code, 0, docker.output);
    assert.match(
      docker.output,
      /A real deploy would refuse:\n\s+- Cannot deploy the project of langgraph\.json to "docker": .*"left-pad"/,
    );
    const refused = await agentcli(dir, ["deploy", "--target", "docker"]);
    assert.equal(refused.code, 1, refused.output);
    assert.match(refused.output, /error: Cannot deploy the project of langgraph\.json to "docker": .*"left-pad"/);
    assert.match(refused.output, /hint: Deploy to a control plane \(--target platform\)/);
  });
});
