/** MCP tools over Streamable HTTP and SSE: listed, called, results used; failures reported. */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { makeConfig, userConfigurable } from "./_bundle.ts";
import { type Harness, startHarness } from "./_harness.ts";
import { type McpServers, startMcpServers } from "../fixtures/mcp-servers/server.ts";

let mcp: McpServers;
const harnesses: Harness[] = [];
before(async () => {
  mcp = await startMcpServers();
});
after(async () => {
  for (const h of harnesses) await h.dispose();
  await mcp.close();
});

test("tools of an http and an sse MCP server are called and their results used", async () => {
  const config = makeConfig({
    mcp: {
      facts: { transport: "http", url: mcp.httpUrl, headers: { "x-api-key": "${FACTS_KEY}" }, timeout: 20 },
      mail: { transport: "sse", url: mcp.sseUrl },
    },
  });
  const h = await startHarness({ config, files: { "AGENTS.md": "Agent" }, env: { FACTS_KEY: "s3cret" } });
  harnesses.push(h);
  assert.deepEqual(h.warnings, []);
  h.server.script(
    { toolCalls: [{ name: "lookup_fact", args: { topic: "tides" } }] },
    { toolCalls: [{ name: "send_email", args: { to: "ana@example.com", body: "tides: moon" } }] },
    { text: "Tides are caused by the moon; I emailed Ana." },
  );
  const out = await h.run("why are there tides? email ana", { thread_id: "m1", ...userConfigurable("alice") });
  const tools = out.messages.filter((m) => m.getType() === "tool").map((m) => String(m.content));
  assert.match(tools[0], /FACT-42: tides are caused by the moon/);
  assert.equal(tools[1], "sent to ana@example.com");
  assert.deepEqual(mcp.sent, [{ to: "ana@example.com", body: "tides: moon" }]);
  assert.ok(h.server.requests[0].tools.includes("lookup_fact") && h.server.requests[0].tools.includes("send_email"));
  assert.match(h.server.requests[1].messages.find((m) => m.role === "tool")!.content, /FACT-42/);
  assert.ok(mcp.headers.some((hd) => hd["x-api-key"] === "s3cret"), "the expanded header reached the server");
});

test("an unreachable server and an unset variable are warnings at start and told to the model", async () => {
  const config = makeConfig({
    mcp: {
      down: { transport: "http", url: "http://127.0.0.1:9/mcp" },
      keyed: { transport: "sse", url: mcp.sseUrl, headers: { authorization: "Bearer ${MISSING_TOKEN}" } },
    },
  });
  const h = await startHarness({ config, files: { "AGENTS.md": "Agent" } });
  harnesses.push(h);
  assert.equal(h.warnings.length, 2);
  assert.match(
    h.warnings.find((w) => w.includes('"down"'))!,
    /Cannot use MCP server "down" of mcp\.json: cannot connect/,
  );
  assert.match(h.warnings.find((w) => w.includes('"keyed"'))!, /\$\{MISSING_TOKEN\} is not set/);
  h.server.script({ text: "the fact service is down" });
  await h.run("look something up", { thread_id: "m2" });
  assert.match(h.server.requests[0].system, /MCP server "down" could not be reached/);
  assert.match(h.server.requests[0].system, /MCP server "keyed" could not be reached/);
});

test("a failing MCP tool is a tool error the model sees; the run goes on", async () => {
  const config = makeConfig({ mcp: { facts: { transport: "http", url: mcp.httpUrl } } });
  const h = await startHarness({ config, files: { "AGENTS.md": "Agent" } });
  harnesses.push(h);
  h.server.script({ toolCalls: [{ name: "broken_fact", args: { topic: "x" } }] }, { text: "the fact service failed" });
  const out = await h.run("look up x", { thread_id: "m3" });
  const tool = out.messages.find((m) => m.getType() === "tool")!;
  assert.equal(tool.status, "error");
  assert.match(String(tool.content), /fact database offline/);
  assert.equal(String(out.messages.at(-1)!.content), "the fact service failed");
});

test("a server that goes down after start is a tool error naming the tool; the run goes on", async () => {
  const gone = await startMcpServers();
  const config = makeConfig({ mcp: { facts: { transport: "http", url: gone.httpUrl } } });
  const h = await startHarness({ config, files: { "AGENTS.md": "Agent" } });
  harnesses.push(h);
  assert.deepEqual(h.warnings, []);
  await gone.close();
  h.server.script({ toolCalls: [{ name: "lookup_fact", args: { topic: "tides" } }] }, {
    text: "the fact service is down",
  });
  const out = await h.run("why tides?", { thread_id: "m4" });
  const tool = out.messages.find((m) => m.getType() === "tool")!;
  assert.equal(tool.status, "error");
  assert.match(String(tool.content), /lookup_fact/);
  assert.equal(String(out.messages.at(-1)!.content), "the fact service is down");
});
