/**
 * Approval gates: a gated tool interrupts with `{ action_requests, review_configs }` and
 * resumes with `{ decisions }`; approve, edit and reject behave as documented.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Command } from "@langchain/langgraph";
import { makeConfig, userConfigurable } from "./_bundle.ts";
import { type Harness, startHarness } from "./_harness.ts";
import { type McpServers, startMcpServers } from "../fixtures/mcp-servers/server.ts";

let h: Harness;
let mcp: McpServers;
before(async () => {
  mcp = await startMcpServers();
  const config = makeConfig({
    approvals: ["write_file", "mail/*"],
    mcp: { mail: { transport: "sse", url: mcp.sseUrl } },
  });
  h = await startHarness({ config, files: { "AGENTS.md": "Agent" } });
});
after(async () => {
  await h.dispose();
  await mcp.close();
});

const cfg = (thread: string) => ({ configurable: { thread_id: thread, ...userConfigurable("alice") } });

async function startGated(thread: string, args: Record<string, unknown>, name = "write_file") {
  h.server.script({ toolCalls: [{ name, args }] });
  const out = await h.graph.invoke({ messages: [{ role: "user", content: "do it" }] }, cfg(thread));
  const state = await h.graph.getState(cfg(thread));
  return { out, state };
}

test("a gated tool interrupts before running, with the action to approve", async () => {
  const { out, state } = await startGated("ap0", { file_path: "/report.md", content: "draft" });
  const value = (out as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value as Record<string, any>;
  assert.ok(value, "the run was interrupted");
  assert.deepEqual(value.action_requests.map((a: any) => [a.name, a.args]), [["write_file", {
    file_path: "/report.md",
    content: "draft",
  }]]);
  assert.equal(typeof value.action_requests[0].description, "string");
  assert.deepEqual(value.review_configs, [{
    action_name: "write_file",
    allowed_decisions: ["approve", "edit", "reject"],
  }]);
  assert.equal((state.values as any).files?.["/report.md"], undefined, "nothing was written before approval");
});

test("approve runs the tool as called", async () => {
  await startGated("ap1", { file_path: "/report.md", content: "draft" });
  h.server.script({ text: "written" });
  await h.graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), cfg("ap1"));
  const state = await h.graph.getState(cfg("ap1"));
  assert.equal((state.values as any).files["/report.md"].content, "draft");
});

test("edit runs the tool with the edited arguments", async () => {
  await startGated("ap2", { file_path: "/report.md", content: "draft" });
  h.server.script({ text: "written" });
  await h.graph.invoke(
    new Command({
      resume: {
        decisions: [{
          type: "edit",
          edited_action: { name: "write_file", args: { file_path: "/final.md", content: "edited" } },
        }],
      },
    }),
    cfg("ap2"),
  );
  const files = ((await h.graph.getState(cfg("ap2"))).values as any).files;
  assert.equal(files["/final.md"].content, "edited");
  assert.equal(files["/report.md"], undefined);
});

test("reject does not run the tool and tells the model why", async () => {
  await startGated("ap3", { to: "boss@example.com", body: "I quit" }, "send_email");
  h.server.script({ text: "ok, not sent" });
  const out = await h.graph.invoke(
    new Command({ resume: { decisions: [{ type: "reject", message: "Do not email my boss." }] } }),
    cfg("ap3"),
  );
  assert.deepEqual(mcp.sent, []);
  const tool = (out as any).messages.find((m: any) => m.getType() === "tool");
  assert.equal(tool.content, "Do not email my boss.");
  assert.equal(tool.status, "error");
  assert.equal(h.server.requests.at(-1)!.messages.at(-1)!.content, "Do not email my boss.");
  assert.equal((out as any).messages.at(-1).content, "ok, not sent");
});

test("ungated tools run without interrupting", async () => {
  h.server.script({ toolCalls: [{ name: "ls", args: { path: "/" } }] }, { text: "listed" });
  const out = await h.graph.invoke({ messages: [{ role: "user", content: "list" }] }, cfg("ap4"));
  assert.equal((out as any).__interrupt__, undefined);
  assert.equal((out as any).messages.at(-1).content, "listed");
});
