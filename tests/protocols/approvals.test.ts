/**
 * The project's deep agent through `hostBundle` (what `dev` and `serve` run): its card lists
 * the project's skills, MCP lists it as a tool, and an approval gate (`approvals.toml`) is an
 * A2A `input-required` task that the peer answers in the same task: approve runs the tool,
 * reject tells the model why, cancel ends the task. Model: the local OpenAI-wire fake.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { Client } from "@langchain/langgraph-sdk";
import { type StreamResponse, type Task, TaskState, type TaskStatusUpdateEvent } from "@a2a-js/sdk";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type HostedProject, hostProject } from "./_host.ts";
import { connectA2A, connectMcp, userMessage } from "./_setup.ts";

const textOf = (parts: Array<{ content?: { $case: string; value: unknown } }> | undefined) =>
  (parts ?? []).map((p) => (p.content?.$case === "text" ? String(p.content.value) : "")).join("");
const send = (text: string, o: { taskId?: string; contextId?: string } = {}) => ({
  message: userMessage(text, o),
  configuration: undefined,
  metadata: undefined,
  tenant: "",
});

describe("approval gates over A2A (hosted project)", () => {
  let model: ModelServer;
  let hosted: HostedProject;
  before(async () => {
    model = await startModelServer();
    hosted = await hostProject("protocols-gated", { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: model.openaiBaseUrl });
  });
  after(async () => {
    await hosted?.close();
    await model?.close();
  });

  it("the card describes the project's agent with its skills; MCP lists it as a tool", async () => {
    const card = await (await fetch(`${hosted.url}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } }))
      .json() as Record<string, any>;
    assert.equal(card.name, "gatekeeper");
    assert.equal(card.description, "Writes notes, but only with your approval.");
    assert.deepEqual(card.skills.map((s: any) => [s.id, s.description]), [["notes", "Writes short notes to files."]]);
    assert.match(card.supportedInterfaces[0].url, new RegExp(`^${hosted.url}/a2a/[0-9a-f-]{36}$`));
    const mcp = await connectMcp(hosted.url);
    try {
      assert.deepEqual((await mcp.listTools()).tools.map((t) => t.name), ["gatekeeper"]);
    } finally {
      await mcp.close();
    }
  });

  it("openapi.json describes /mcp, the agent card and /a2a/{assistant_id} as operations, secured like the Agent API", async () => {
    const doc = await (await fetch(`${hosted.url}/openapi.json`)).json() as Record<string, any>;
    for (const p of ["/mcp/*", "/a2a/*", "/.well-known/*"]) {
      assert.equal(doc.paths[p], undefined, `no wildcard entry ${p}`);
    }
    assert.deepEqual(doc.security, [{ bearer: [] }, { apiKey: [] }]);
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ["apiKey", "bearer"]);
    assert.equal(doc.paths["/ok"].get.security.length, 0, "/ok is public");

    const mcp = doc.paths["/mcp"];
    assert.deepEqual(Object.keys(mcp).sort(), ["delete", "get", "post"]);
    assert.equal(
      mcp.post.security,
      doc.paths["/threads"].post.security,
      "POST /mcp inherits the document's security, as the Agent API does",
    );
    assert.ok(mcp.post.responses["401"]);
    assert.ok(mcp.post.responses["200"].content["text/event-stream"]);
    assert.equal(
      mcp.post.requestBody.content["application/json"].schema.oneOf[0].$ref,
      "#/components/schemas/McpMessage",
    );
    // The MCP message schema is the SDK's own (its transport validates with it), as JSON Schema.
    const { JSONRPCMessageSchema } = await import("@modelcontextprotocol/sdk/types.js");
    const { $schema: _, ...fromSdk } = z.toJSONSchema(JSONRPCMessageSchema, { unrepresentable: "any" }) as Record<
      string,
      unknown
    >;
    const { description: __, ...documented } = doc.components.schemas.McpMessage;
    assert.deepEqual(documented, fromSdk);
    for (const m of ["get", "delete"]) {
      assert.deepEqual(
        Object.keys(mcp[m].responses).filter((s) => s !== "401"),
        ["405"],
        `${m.toUpperCase()} /mcp documents 405`,
      );
      const res = await fetch(`${hosted.url}/mcp`, { method: m.toUpperCase() });
      assert.equal(res.status, 405, `${m.toUpperCase()} /mcp answers as documented`);
      assert.equal(res.headers.get("allow"), "POST");
    }

    const card = doc.paths["/.well-known/agent-card.json"].get;
    assert.deepEqual(card.security, [], "the card is public");
    assert.deepEqual(card.parameters.filter((p: any) => p.in === "query").map((p: any) => p.name), ["assistant_id"]);
    assert.equal(card.responses["200"].content["application/json"].schema.$ref, "#/components/schemas/AgentCard");
    const listed = (await (await fetch(`${hosted.url}/assistants/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    })).json() as Array<{ assistant_id: string }>)[0]!;
    const byId = await fetch(`${hosted.url}/.well-known/agent-card.json?assistant_id=${listed.assistant_id}`);
    assert.equal(byId.status, 200);
    const served = await byId.json() as Record<string, unknown>;
    for (const k of doc.components.schemas.AgentCard.required) assert.ok(k in served, `card has ${k}`);
    assert.equal((await fetch(`${hosted.url}/.well-known/agent-card.json?assistant_id=nobody`)).status, 404);

    const a2a = doc.paths["/a2a/{assistant_id}"];
    assert.deepEqual(Object.keys(a2a), ["post"]);
    assert.equal(a2a.post.security, doc.paths["/threads"].post.security);
    assert.ok(a2a.post.responses["401"]);
    assert.deepEqual(a2a.post.parameters.filter((p: any) => p.in === "path").map((p: any) => p.name), ["assistant_id"]);
    assert.deepEqual(Object.keys(a2a.post.responses["200"].content).sort(), ["application/json", "text/event-stream"]);
    assert.match(a2a.post.description, /message\/stream/);
    for (const name of ["JsonRpcRequest", "JsonRpcResponse", "AgentCard", "Error"]) {
      assert.ok(doc.components.schemas[name], `schema ${name}`);
    }
  });

  it("approve: the gated tool runs after the peer approves in the same task", async () => {
    model.script(
      {
        when: "MARKER-GATED",
        toolCalls: [{ name: "write_file", args: { file_path: "/note.md", content: "buy milk" } }],
      },
      { when: "MARKER-GATED", text: "Saved the note." },
    );
    const client = await connectA2A(hosted.url);
    const task = await client.sendMessage(send("note: buy milk")) as Task;
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const data = task.status?.message?.parts.find((p) => p.content?.$case === "data")?.content?.value as {
      interrupts: Array<{ action_requests: Array<{ name: string; args: unknown }> }>;
    };
    assert.deepEqual(data.interrupts[0]!.action_requests.map((a) => [a.name, a.args]), [["write_file", {
      file_path: "/note.md",
      content: "buy milk",
    }]]);
    assert.match(textOf(task.status?.message?.parts), /write_file/);

    const api = new Client({ apiUrl: hosted.url });
    assert.equal((await api.threads.get(task.contextId)).status, "interrupted");

    const done = await client.sendMessage(send("approve", { taskId: task.id, contextId: task.contextId })) as Task;
    assert.equal(done.id, task.id);
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(done.artifacts[0]?.parts), "Saved the note.");
    const state = await api.threads.getState(task.contextId);
    assert.match(JSON.stringify((state.values as { files?: unknown }).files ?? {}), /buy milk/);
    // Both runs of the task are Agent API runs of that thread.
    const runs = await api.runs.list(task.contextId);
    assert.equal(runs.length, 2);
    assert.ok(runs.some((r) => r.run_id === task.id));
  });

  it("reject (streamed): the tool does not run and the model hears the reason", async () => {
    model.script(
      { when: "MARKER-GATED", toolCalls: [{ name: "write_file", args: { file_path: "/secret.md", content: "x" } }] },
      { when: "MARKER-GATED", text: "Understood, nothing written." },
    );
    const client = await connectA2A(hosted.url);
    const first: StreamResponse[] = [];
    for await (const e of client.sendMessageStream(send("write a secret"))) first.push(e);
    const waiting = first.at(-1)!.payload!.value as { taskId: string; contextId: string; status: { state: TaskState } };
    assert.equal(waiting.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);

    const second: StreamResponse[] = [];
    for await (
      const e of client.sendMessageStream(
        send("reject: not now", { taskId: waiting.taskId, contextId: waiting.contextId }),
      )
    ) second.push(e);
    const end = second.at(-1)!.payload!.value as TaskStatusUpdateEvent;
    assert.equal(end.taskId, waiting.taskId);
    assert.equal(end.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(end.status?.message?.parts), "Understood, nothing written.");
    assert.equal(model.requests.at(-1)!.messages.at(-1)!.content, "not now");
    const state = await new Client({ apiUrl: hosted.url }).threads.getState(waiting.contextId);
    assert.doesNotMatch(JSON.stringify((state.values as { files?: unknown }).files ?? {}), /secret/);
  });

  it("an unclear answer is refused; cancel ends an input-required task", async () => {
    model.script({
      when: "MARKER-GATED",
      toolCalls: [{ name: "write_file", args: { file_path: "/a.md", content: "a" } }],
    });
    const client = await connectA2A(hosted.url);
    const task = await client.sendMessage(send("write a")) as Task;
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    await assert.rejects(client.sendMessage(send("maybe later?", { taskId: task.id })), /approve.*reject/);
    const canceled = await client.cancelTask({ id: task.id, tenant: "", metadata: undefined });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    await assert.rejects(client.sendMessage(send("approve", { taskId: task.id })), /canceled/);
    assert.deepEqual(model.pending(), []);
  });
});
