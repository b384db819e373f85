/**
 * `internal_template`: the templates the CLI registers (`starter` from `agentcli init`,
 * `research` from examples/research), their listing (extension), validation naming the
 * allowed templates, and a deployment built from each reaching DEPLOYED on the local listener,
 * its URL answering the Agent API through the LangGraph SDK.
 */
import { builtinPlugins } from "../../plugins/registry.ts";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { platformTemplates, projectBuilders } from "../../core/cli/platform.ts";
import { RESEARCH_TEMPLATE } from "../../core/platform/reconciler/templates.ts";
import { startTestPlatform, type TestPlatform, until } from "./_harness.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let t: TestPlatform;
before(async () => {
  t = await startTestPlatform({
    builders: projectBuilders({ pluginPaths: [], version: "0.0.0-test", builtinPlugins: async () => builtinPlugins }),
  });
});
after(async () => {
  await t?.close();
});

async function finalRevision(deploymentId: string, revisionId: string) {
  return until(
    async () => {
      const r = await t.call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}`);
      return ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED", "CREATE_FAILED", "INTERRUPTED"].includes(r.body.status)
        ? r.body
        : null;
    },
    "the revision to end",
    1800,
  );
}

describe("the template catalogue", () => {
  test("the research template is the examples/research project, file for file", () => {
    for (const f of RESEARCH_TEMPLATE.files("research-assistant")) {
      assert.equal(
        f.content,
        readFileSync(`${ROOT}examples/research/${f.path}`, "utf8"),
        `${f.path} differs from examples/research; copy it into core/platform/reconciler/templates.ts`,
      );
    }
    const toml = RESEARCH_TEMPLATE.files("My Agent").find((f) => f.path === "agent.toml")!.content;
    assert.match(toml, /^name = "My Agent"$/m);
  });

  test("the starter template is what agentcli init writes, without .env", async () => {
    const { scaffoldFiles } = await import("../../core/cli/scaffold.ts");
    const starter = platformTemplates("1.2.3").find((x) => x.name === "starter")!;
    const expected = scaffoldFiles("demo", "1.2.3").filter((f) => f.path !== ".env");
    assert.deepEqual(starter.files("demo"), expected);
  });

  test("GET /v2/templates lists them (paged), GET /v2/templates/{name} reads one; both need a key", async () => {
    assert.equal((await t.call("GET", "/v2/templates", { key: null })).status, 401);
    const all = await t.call("GET", "/v2/templates");
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.resources.map((x: { name: string }) => x.name), ["starter", "research"]);
    assert.equal(all.body.offset, 2);
    const research = all.body.resources[1];
    assert.ok(research.files.includes("subagents/critic/AGENTS.md"), research.files.join());
    assert.deepEqual(research.required_secrets, []);
    assert.deepEqual(all.body.resources[0].required_secrets, ["PLATFORM_API_KEY"]);
    const p1 = await t.call("GET", "/v2/templates?limit=1");
    const p2 = await t.call("GET", `/v2/templates?limit=1&offset=${p1.body.offset}`);
    const p3 = await t.call("GET", `/v2/templates?limit=1&offset=${p2.body.offset}`);
    assert.deepEqual([...p1.body.resources, ...p2.body.resources].map((x: { name: string }) => x.name), [
      "starter",
      "research",
    ]);
    assert.deepEqual(p3.body.resources, []);
    assert.equal((await t.call("GET", "/v2/templates?limit=0")).status, 422);
    assert.equal((await t.call("GET", "/v2/templates/research")).body.name, "research");
    const missing = await t.call("GET", "/v2/templates/nope");
    assert.equal(missing.status, 404);
    assert.match(missing.body.detail, /nope/);
  });
});

describe("validation", () => {
  test("a missing or unknown template is refused, naming the allowed ones", async () => {
    const none = await t.call("POST", "/v2/deployments", { body: { name: "tpl-none", source: "internal_template" } });
    assert.equal(none.status, 422);
    assert.deepEqual(none.body.detail[0].loc, ["body", "source_config", "template"]);
    assert.match(none.body.detail[0].msg, /"starter", "research"/);
    const unknown = await t.call("POST", "/v2/deployments", {
      body: { name: "tpl-unknown", source: "internal_template", source_config: { template: "chatbot" } },
    });
    assert.equal(unknown.status, 422);
    assert.match(unknown.body.detail[0].msg, /unknown template "chatbot".*"starter", "research"/);
  });

  test("a template's required secrets are checked on create", async () => {
    const r = await t.call("POST", "/v2/deployments", {
      body: { name: "tpl-nokey", source: "internal_template", source_config: { template: "starter" } },
    });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.detail[0].loc, ["body", "secrets"]);
    assert.match(r.body.detail[0].msg, /PLATFORM_API_KEY/);
  });

  test("the template cannot be changed after creation; fields of other sources are refused", async () => {
    const c = await t.call("POST", "/v2/deployments", {
      body: {
        name: "tpl-fixed",
        source: "internal_template",
        source_config: { template: "research", resource_spec: { min_scale: 1 } },
      },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    const p = await t.call("PATCH", `/v2/deployments/${c.body.id}`, {
      body: { source_config: { template: "starter" } },
    });
    assert.equal(p.status, 422);
    assert.deepEqual(p.body.detail[0].loc, ["body", "source_config", "template"]);
    assert.equal(p.body.detail[0].type, "immutable");
    const same = await t.call("PATCH", `/v2/deployments/${c.body.id}`, {
      body: { source_config: { template: "research", deployment_type: "dev" } },
    });
    assert.equal(same.status, 200, JSON.stringify(same.body));
    const other = await t.call("POST", "/v2/deployments", {
      body: {
        name: "tpl-image",
        source: "internal_template",
        source_config: { template: "research" },
        source_revision_config: { image_uri: "a:1" },
      },
    });
    assert.equal(other.status, 422);
    assert.deepEqual(other.body.detail[0].loc, ["body", "source_revision_config", "image_uri"]);
    const wrong = await t.call("POST", "/v2/deployments", {
      body: {
        name: "tpl-wrong",
        source: "internal_container",
        source_config: { template: "research" },
        source_revision_config: { image_uri: "a:1" },
      },
    });
    assert.equal(wrong.status, 422);
    assert.deepEqual(wrong.body.detail[0].loc, ["body", "source_config", "template"]);
    await t.call("DELETE", `/v2/deployments/${c.body.id}`);
  });
});

describe("a deployment from a template, on the local listener", () => {
  test("research: built from the template, DEPLOYED, its URL answers the Agent API without a key (anonymous)", async () => {
    const c = await t.call("POST", "/v2/deployments", {
      body: { name: "Research Desk", source: "internal_template", source_config: { template: "research" } },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.ok(c.body.latest_revision_id);
    const rev = await finalRevision(c.body.id, c.body.latest_revision_id);
    const logs = await t.call("GET", `/v2/deployments/${c.body.id}/revisions/${rev.id}/logs`);
    const text = logs.body.logs.map((l: { message: string }) => l.message).join("\n");
    assert.equal(rev.status, "DEPLOYED", `${rev.status_message}\n${text}`);
    assert.match(text, /template "research": 9 files/);
    assert.match(text, /bundle "Research Desk"/);
    const d = (await t.call("GET", `/v2/deployments/${c.body.id}`)).body;
    assert.equal(d.active_revision_id, rev.id);
    assert.ok(d.url);
    const client = new Client({ apiUrl: d.url });
    const assistants = await client.assistants.search({ limit: 10 });
    assert.ok(assistants.length >= 1, JSON.stringify(assistants));
    const thread = await client.threads.create({ metadata: { from: "template-test" } });
    assert.ok(thread.thread_id);
  });

  test("starter: its secrets reach the agent, which then requires x-api-key", async () => {
    const c = await t.call("POST", "/v2/deployments", {
      body: {
        name: "starter-1",
        source: "internal_template",
        source_config: { template: "starter" },
        secrets: [{ name: "PLATFORM_API_KEY", value: "agent-key-1" }],
      },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    const rev = await finalRevision(c.body.id, c.body.latest_revision_id);
    assert.equal(rev.status, "DEPLOYED", rev.status_message);
    const d = (await t.call("GET", `/v2/deployments/${c.body.id}`)).body;
    const anonymous = await fetch(`${d.url}/assistants/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();
    const client = new Client({ apiUrl: d.url, defaultHeaders: { "x-api-key": "agent-key-1" } });
    assert.ok((await client.assistants.search({ limit: 10 })).length >= 1);
    // A secrets patch rebuilds from the same template and switches.
    const p = await t.call("PATCH", `/v2/deployments/${c.body.id}`, {
      body: { secrets: [{ name: "PLATFORM_API_KEY", value: "agent-key-2" }] },
    });
    assert.notEqual(p.body.latest_revision_id, c.body.latest_revision_id);
    const second = await finalRevision(c.body.id, p.body.latest_revision_id);
    assert.equal(second.status, "DEPLOYED", second.status_message);
    const client2 = new Client({ apiUrl: d.url, defaultHeaders: { "x-api-key": "agent-key-2" } });
    assert.ok((await client2.assistants.search({ limit: 10 })).length >= 1);
  });
});
