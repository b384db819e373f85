/**
 * A2A through the official A2A JavaScript SDK client: the agent card (default and per
 * assistant, 1.0 and 0.3 forms), send, stream, get, cancel, and the input-required round
 * trip (an interrupt answered by a follow-up message with the same taskId), under anonymous
 * and identity_a; the 0.3 method names (`message/send`, `tasks/get`, ...) over plain
 * JSON-RPC; 401 without a token.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type StreamResponse, type Task, type TaskArtifactUpdateEvent, TaskState } from "@a2a-js/sdk";
import { hideInternal } from "../../core/server/protocols/a2a.ts";
import { connectA2A, type ProtocolServer, type Provider, startProtocolServer, userMessage } from "./_setup.ts";

const textOf = (parts: Array<{ content?: { $case: string; value: unknown } }> | undefined) =>
  (parts ?? []).map((p) => (p.content?.$case === "text" ? String(p.content.value) : "")).join("");

function asTask(r: unknown): Task {
  assert.ok(r && typeof r === "object" && "status" in r, `expected a Task, got ${JSON.stringify(r)}`);
  return r as Task;
}

async function rpc(url: string, method: string, params: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return {
    status: res.status,
    body: await res.json() as { result?: Record<string, any>; error?: { code: number; message: string } },
  };
}

for (const provider of ["anonymous", "identity_a"] as Provider[]) {
  describe(`A2A under ${provider}`, () => {
    let srv: ProtocolServer;
    let headers: Record<string, string>;
    before(async () => {
      srv = await startProtocolServer(provider);
      headers = await srv.headersFor("ada");
    });
    after(async () => {
      await srv?.close();
    });

    it("serves the agent card publicly: default assistant, per assistant, 1.0 and 0.3 forms", async () => {
      const res = await fetch(`${srv.url}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } });
      assert.equal(res.status, 200);
      const card = await res.json() as Record<string, any>;
      const echo = await srv.client(headers).assistants.search({ graphId: "echo" });
      assert.equal(card.name, "echo");
      assert.equal(card.description, "Repeats what you say.");
      assert.deepEqual(card.supportedInterfaces.map((i: any) => [i.url, i.protocolBinding, i.protocolVersion]), [
        [`${srv.url}/a2a/${echo[0]!.assistant_id}`, "JSONRPC", "1.0"],
        [`${srv.url}/a2a/${echo[0]!.assistant_id}`, "JSONRPC", "0.3"],
      ]);
      assert.equal(card.capabilities.streaming, true);
      assert.deepEqual(card.skills.map((s: any) => [s.id, s.description]), [["repeat", "Repeats the message."]]);
      if (provider === "identity_a") {
        assert.deepEqual(Object.keys(card.securitySchemes), ["bearer"]);
        assert.equal(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme, "Bearer");
        assert.deepEqual(card.securityRequirements.map((r: any) => Object.keys(r.schemes)), [["bearer"]]);
      } else {
        assert.equal(Object.keys(card.securitySchemes ?? {}).length, 0);
        assert.equal((card.securityRequirements ?? []).length, 0);
      }

      const slow = await (await fetch(`${srv.url}/.well-known/agent-card.json?assistant_id=slow`, {
        headers: { "A2A-Version": "1.0" },
      })).json() as Record<string, any>;
      assert.equal(slow.name, "slow");
      assert.match(slow.supportedInterfaces[0].url, /\/a2a\/[0-9a-f-]{36}$/);

      const legacy = await (await fetch(`${srv.url}/.well-known/agent-card.json`)).json() as Record<string, any>;
      assert.equal(legacy.protocolVersion, "0.3.0");
      assert.equal(legacy.url, `${srv.url}/a2a/${echo[0]!.assistant_id}`);
      assert.equal(legacy.preferredTransport, "JSONRPC");
      if (provider === "identity_a") assert.deepEqual(legacy.security, [{ bearer: [] }]);

      assert.equal((await fetch(`${srv.url}/.well-known/agent-card.json?assistant_id=nope`)).status, 404);
    });

    it("message/send runs the assistant: a completed task with the answer; contextId continues the thread", async () => {
      const client = await connectA2A(srv.url, headers);
      const task = asTask(
        await client.sendMessage({
          message: userMessage("hi there"),
          configuration: undefined,
          metadata: undefined,
          tenant: "",
        }),
      );
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(textOf(task.status?.message?.parts), "echo: hi there");
      assert.equal(task.artifacts[0]?.name, "answer");
      assert.equal(textOf(task.artifacts[0]?.parts), "echo: hi there");
      assert.deepEqual(task.history.map((m) => textOf(m.parts)), ["hi there", "echo: hi there"]);

      // taskId is a run and contextId a thread of the Agent API.
      const api = srv.client(headers);
      assert.equal((await api.runs.get(task.contextId, task.id)).status, "success");

      const next = asTask(
        await client.sendMessage({
          message: userMessage("more", { contextId: task.contextId }),
          configuration: undefined,
          metadata: undefined,
          tenant: "",
        }),
      );
      assert.equal(next.contextId, task.contextId);
      assert.notEqual(next.id, task.id);
      assert.equal(next.history.length, 4);

      const got = await client.getTask({ id: task.id, tenant: "", historyLength: 1 });
      assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(got.history.length, 1);

      await assert.rejects(client.getTask({ id: "00000000-0000-4000-8000-00000000dead", tenant: "" }), /not found/i);
      if (provider === "identity_a") {
        const bob = await connectA2A(srv.url, await srv.headersFor("bob"));
        await assert.rejects(bob.getTask({ id: task.id, tenant: "" }), /not found/i);
      }
    });

    it("a new client-chosen contextId starts that thread for the caller; another user's contextId is not reachable", async () => {
      const client = await connectA2A(srv.url, headers);
      const contextId = `ctx-${crypto.randomUUID()}`;
      const task = asTask(
        await client.sendMessage({
          message: userMessage("fresh", { contextId }),
          configuration: undefined,
          metadata: undefined,
          tenant: "",
        }),
      );
      assert.equal(task.contextId, contextId);
      assert.equal(textOf(task.status?.message?.parts), "echo: fresh");
      const api = srv.client(headers);
      assert.equal((await api.threads.get(contextId)).thread_id, contextId);
      if (provider === "identity_a") {
        const bobHeaders = await srv.headersFor("bob");
        const bob = await connectA2A(srv.url, bobHeaders);
        await assert.rejects(
          bob.sendMessage({
            message: userMessage("let me in", { contextId }),
            configuration: undefined,
            metadata: undefined,
            tenant: "",
          }),
          // Ids are one namespace: a context id in use is "taken", whoever holds it.
          (err: Error) => /the id is taken/i.test(err.message) && err.message.includes(contextId),
        );
        // Ada's thread is untouched, and bob got no thread of that id.
        const state = await api.threads.getState(contextId);
        assert.equal((state.values as { messages: unknown[] }).messages.length, 2);
        assert.equal(
          (await srv.client(bobHeaders).threads.search({ limit: 100 })).some((t) => t.thread_id === contextId),
          false,
        );
      }
    });

    it("message/stream streams the task, working updates, the answer artifact and the final status", async () => {
      const client = await connectA2A(srv.url, headers);
      const events: StreamResponse[] = [];
      for await (
        const e of client.sendMessageStream({
          message: userMessage("stream me"),
          configuration: undefined,
          metadata: undefined,
          tenant: "",
        })
      ) events.push(e);
      const kinds = events.map((e) => e.payload?.$case);
      assert.equal(kinds[0], "task");
      assert.ok(kinds.includes("statusUpdate"));
      const artifact = events.find((e) => e.payload?.$case === "artifactUpdate")?.payload
        ?.value as TaskArtifactUpdateEvent;
      assert.equal(textOf(artifact.artifact?.parts), "echo: stream me");
      const last = events.at(-1)!.payload!;
      assert.equal(last.$case, "statusUpdate");
      assert.equal((last.value as { status: { state: TaskState } }).status.state, TaskState.TASK_STATE_COMPLETED);
      const states = events.filter((e) => e.payload?.$case === "statusUpdate").map((e) =>
        (e.payload!.value as { status: { state: TaskState } }).status.state
      );
      assert.ok(states.includes(TaskState.TASK_STATE_WORKING), JSON.stringify(states));
    });

    it("tasks/cancel cancels a working task", async () => {
      const client = await connectA2A(srv.url, headers, "slow");
      const task = asTask(
        await client.sendMessage({
          message: userMessage("take your time"),
          configuration: { returnImmediately: true, acceptedOutputModes: [], taskPushNotificationConfig: undefined },
          metadata: undefined,
          tenant: "",
        }),
      );
      assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status!.state));
      // A second client subscribes to the task; its stream ends when the task is canceled.
      const watcher = await connectA2A(srv.url, headers, "slow");
      const watched: StreamResponse[] = [];
      const watching = (async () => {
        for await (const e of watcher.resubscribeTask({ id: task.id, tenant: "" })) watched.push(e);
      })();
      while (!watched.length) await new Promise((r) => setTimeout(r, 20));
      const canceled = await client.cancelTask({ id: task.id, tenant: "", metadata: undefined });
      await watching;
      assert.equal(watched[0]!.payload?.$case, "task");
      assert.equal(
        (watched.at(-1)!.payload!.value as { status: { state: TaskState } }).status.state,
        TaskState.TASK_STATE_CANCELED,
      );
      assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
      assert.equal((await client.getTask({ id: task.id, tenant: "" })).status?.state, TaskState.TASK_STATE_CANCELED);
      await assert.rejects(client.cancelTask({ id: task.id, tenant: "", metadata: undefined }), /cancel/i);
    });

    it("an interrupt is an input-required task; a follow-up with the same taskId resumes the run", async () => {
      const client = await connectA2A(srv.url, headers, "interrupt");
      const task = asTask(
        await client.sendMessage({
          message: userMessage("start"),
          configuration: undefined,
          metadata: undefined,
          tenant: "",
        }),
      );
      assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const parts = task.status?.message?.parts ?? [];
      assert.match(textOf(parts), /approve\?/);
      assert.deepEqual(parts.find((p) => p.content?.$case === "data")?.content?.value, {
        interrupts: [{ question: "approve?" }],
      });

      const resumed = asTask(
        await client.sendMessage({
          message: userMessage("yes please", { taskId: task.id, contextId: task.contextId }),
          configuration: undefined,
          metadata: undefined,
          tenant: "",
        }),
      );
      assert.equal(resumed.id, task.id);
      assert.equal(resumed.status?.state, TaskState.TASK_STATE_COMPLETED);
      const state = await srv.client(headers).threads.getState(task.contextId);
      assert.deepEqual((state.values as { log: string[] }).log, ["asked", "done:yes please"]);

      // A finished task takes no more follow-ups.
      await assert.rejects(
        client.sendMessage({
          message: userMessage("again", { taskId: task.id }),
          configuration: undefined,
          metadata: undefined,
          tenant: "",
        }),
        /completed/,
      );
    });

    it("speaks the 0.3 method names for peers without A2A-Version", async () => {
      const card = await (await fetch(`${srv.url}/.well-known/agent-card.json`)).json() as { url: string };
      const sent = await rpc(card.url, "message/send", {
        message: {
          kind: "message",
          messageId: crypto.randomUUID(),
          role: "user",
          parts: [{ kind: "text", text: "old peer" }],
        },
      }, headers);
      assert.equal(sent.status, 200);
      assert.equal(sent.body.result?.kind, "task");
      assert.equal(sent.body.result?.status.state, "completed");
      assert.equal(sent.body.result?.artifacts[0].parts[0].text, "echo: old peer");
      const got = await rpc(card.url, "tasks/get", { id: sent.body.result!.id }, headers);
      assert.equal(got.body.result?.status.state, "completed");
      const cancel = await rpc(card.url, "tasks/cancel", { id: sent.body.result!.id }, headers);
      assert.equal(cancel.body.error?.code, -32002);
      const unknown = await rpc(card.url, "tasks/nope", {}, headers);
      assert.equal(unknown.body.error?.code, -32601);
    });

    it("answers JSON-RPC errors with the standard codes: parse error, invalid request, method not found (1.0 and 0.3)", async () => {
      const card = await (await fetch(`${srv.url}/.well-known/agent-card.json`)).json() as { url: string };
      const raw = async (body: string, extra: Record<string, string> = {}) => {
        const res = await fetch(card.url, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers, ...extra },
          body,
        });
        return {
          status: res.status,
          body: await res.json() as { jsonrpc: string; id: unknown; error?: { code: number; message: string } },
        };
      };
      const v1 = { "A2A-Version": "1.0" };
      for (const extra of [{}, v1]) {
        for (const body of ["{not json", ""]) {
          const r = await raw(body, extra);
          assert.equal(r.status, 200);
          assert.equal(r.body.jsonrpc, "2.0");
          assert.equal(r.body.id, null);
          assert.equal(r.body.error?.code, -32700, JSON.stringify(r.body));
          assert.match(r.body.error!.message, /^Parse error/);
        }
        for (const body of ["[]", "42", JSON.stringify({ id: 3, method: "GetTask", params: { id: "x" } })]) {
          assert.equal((await raw(body, extra)).body.error?.code, -32600, body);
        }
      }
      // An unknown method is -32601 with or without params (the SDK checked params first: -32602).
      for (const params of [undefined, {}, { id: "x" }]) {
        const legacy = await raw(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tasks/nope", params }));
        assert.equal(legacy.body.id, 7);
        assert.equal(legacy.body.error?.code, -32601, JSON.stringify(legacy.body));
        assert.match(legacy.body.error!.message, /^Method not found: "tasks\/nope"/);
        const current = await raw(JSON.stringify({ jsonrpc: "2.0", id: "a", method: "NoSuchMethod", params }), v1);
        assert.equal(current.body.id, "a");
        assert.equal(current.body.error?.code, -32601, JSON.stringify(current.body));
        assert.match(current.body.error!.message, /^Method not found: "NoSuchMethod"/);
      }
      // A method of the other protocol version says which header to send.
      const mixed = await raw(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: {} }), v1);
      assert.equal(mixed.body.error?.code, -32601);
      assert.match(mixed.body.error!.message, /A2A 0\.3 method: send it without the A2A-Version header/);
      // Known methods with bad params are still -32602 / the SDK's own answers.
      const badParams = await raw(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tasks/get" }));
      assert.equal(badParams.body.error?.code, -32602);
    });

    it("push notification config methods are -32003; missing or malformed params are -32602 naming the field, never a JS message", async () => {
      const card = await (await fetch(`${srv.url}/.well-known/agent-card.json`)).json() as {
        url: string;
        capabilities: { pushNotifications?: boolean };
      };
      assert.equal(card.capabilities.pushNotifications, false);
      const v1 = { "A2A-Version": "1.0" };
      const push: Array<[string, unknown, Record<string, string>]> = [
        ["tasks/pushNotificationConfig/set", { taskId: "x" }, {}],
        ["tasks/pushNotificationConfig/set", {}, {}],
        ["tasks/pushNotificationConfig/get", { id: "x" }, {}],
        ["tasks/pushNotificationConfig/list", {}, {}],
        ["tasks/pushNotificationConfig/delete", { id: "x", pushNotificationConfigId: "y" }, {}],
        ["CreateTaskPushNotificationConfig", { taskId: "x" }, v1],
        ["GetTaskPushNotificationConfig", {}, v1],
        ["ListTaskPushNotificationConfigs", { taskId: "x" }, v1],
        ["DeleteTaskPushNotificationConfig", {}, v1],
      ];
      for (const [method, params, extra] of push) {
        const r = await rpc(card.url, method, params, { ...headers, ...extra });
        assert.equal(r.body.error?.code, -32003, `${method}: ${JSON.stringify(r.body)}`);
        assert.match(r.body.error!.message, /Push notifications are not supported/);
      }
      const legacyMsg = (message: Record<string, unknown>) => ({
        message: {
          kind: "message",
          messageId: crypto.randomUUID(),
          role: "user",
          parts: [{ kind: "text", text: "hi" }],
          ...message,
        },
      });
      const bad: Array<[string, unknown, Record<string, string>, RegExp]> = [
        ["tasks/get", {}, {}, /"params\.id" is required/],
        ["tasks/cancel", { id: "" }, {}, /"params\.id" is required/],
        ["tasks/resubscribe", {}, {}, /"params\.id" is required/],
        ["tasks/get", { id: "x", historyLength: "all" }, {}, /"params\.historyLength" must be a non-negative integer/],
        ["GetTask", {}, v1, /"params\.id" is required/],
        ["CancelTask", {}, v1, /"params\.id" is required/],
        ["SubscribeToTask", {}, v1, /"params\.id" is required/],
        ["message/send", legacyMsg({ parts: [{ kind: "file" }] }), {}, /"params\.message\.parts\[0\]" is a file part/],
        ["message/send", legacyMsg({ extensions: 5 }), {}, /"params\.message\.extensions" must be an array of strings/],
        [
          "message/send",
          { ...legacyMsg({}), configuration: { acceptedOutputModes: 5 } },
          {},
          /"params\.configuration\.acceptedOutputModes"/,
        ],
        ["message/stream", legacyMsg({ parts: [] }), {}, /"params\.message\.parts" must be a non-empty array/],
        ["SendMessage", {}, v1, /"params\.message" is required/],
        [
          "SendMessage",
          { message: { messageId: "m", role: "ROLE_USER", parts: [{ raw: {} }] } },
          v1,
          /"raw" must be a base64 string/,
        ],
      ];
      for (const [method, params, extra, expected] of bad) {
        const r = await rpc(card.url, method, params, { ...headers, ...extra });
        assert.equal(r.body.error?.code, -32602, `${method}: ${JSON.stringify(r.body)}`);
        assert.match(r.body.error!.message, expected);
        assert.doesNotMatch(r.body.error!.message, /Cannot read|undefined/);
      }
    });

    it("text that cannot be stored (U+0000, a lone surrogate) is -32602 naming where it is (1.0 and 0.3)", async () => {
      const card = await (await fetch(`${srv.url}/.well-known/agent-card.json`)).json() as { url: string };
      const v1 = { "A2A-Version": "1.0" };
      const legacyMsg = (text: string, extra: Record<string, unknown> = {}) => ({
        message: {
          kind: "message",
          messageId: crypto.randomUUID(),
          role: "user",
          parts: [{ kind: "text", text }],
          ...extra,
        },
      });
      const v1Msg = (text: string, extra: Record<string, unknown> = {}) => ({
        message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra },
      });
      const threadCount = async () => (await srv.client(headers).threads.search({ limit: 1000 })).length;
      const before = await threadCount();
      const cases: Array<[string, unknown, Record<string, string>, RegExp]> = [
        ["message/send", legacyMsg("a\u0000b"), {}, /message\.parts contains a NUL character \(U\+0000\)/],
        [
          "message/send",
          legacyMsg("hi", { contextId: "c\uDC00" }),
          {},
          /message\.contextId contains an unpaired UTF-16 surrogate/,
        ],
        ["SendMessage", v1Msg("a\uD800b"), v1, /message\.parts contains an unpaired UTF-16 surrogate/],
        ["SendMessage", v1Msg("hi", { contextId: "c\u0000" }), v1, /message\.contextId contains a NUL character/],
        ["tasks/get", { id: "t\u0000" }, {}, /task id contains a NUL character/],
        ["GetTask", { id: "t\u0000" }, v1, /task id contains a NUL character/],
      ];
      for (const [method, params, extra, expected] of cases) {
        const r = await rpc(card.url, method, params, { ...headers, ...extra });
        assert.equal(r.body.error?.code, -32602, `${method}: ${JSON.stringify(r.body)}`);
        assert.match(r.body.error!.message, expected);
      }
      // The SDK client sees the same refusal.
      const client = await connectA2A(srv.url, headers);
      await assert.rejects(
        client.sendMessage({
          message: userMessage("x\u0000y"),
          configuration: undefined,
          metadata: undefined,
          tenant: "",
        }),
        /NUL character/,
      );
      assert.equal(await threadCount(), before);
    });

    if (provider === "identity_a") {
      it("refuses JSON-RPC calls without a valid token with 401 (the card stays public)", async () => {
        const card = await (await fetch(`${srv.url}/.well-known/agent-card.json`)).json() as { url: string };
        const attempts: Array<Record<string, string>> = [{}, { authorization: "Bearer forged" }];
        for (const h of attempts) {
          const res = await fetch(card.url, {
            method: "POST",
            headers: { "content-type": "application/json", ...h },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "x" } }),
          });
          assert.equal(res.status, 401);
          assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
        }
        const client = await connectA2A(srv.url, {});
        await assert.rejects(
          client.sendMessage({ message: userMessage("hi"), configuration: undefined, metadata: undefined, tenant: "" }),
          /401/,
        );
      });
    }
  });
}

describe("A2A internal errors", () => {
  it("an SDK answer carrying a JS message as -32603 is made generic, and the message is logged", () => {
    const logged: string[] = [];
    const log = {
      info() {},
      warn() {},
      error: (msg: string, err?: unknown) => void logged.push(`${msg}: ${(err as Error).message}`),
    };
    const out = hideInternal({
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32603, message: "Cannot read properties of undefined (reading 'id')" },
    }, { log });
    assert.deepEqual(out, {
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32603, message: "Internal error (the server logged the details)" },
    });
    assert.deepEqual(logged, ["A2A request failed: Cannot read properties of undefined (reading 'id')"]);
    // Other answers pass as they are.
    const notFound = { jsonrpc: "2.0" as const, id: 5, error: { code: -32001, message: 'Task "x" not found' } };
    assert.equal(hideInternal(notFound, { log }), notFound);
    const ok = { jsonrpc: "2.0" as const, id: 6, result: { kind: "task" } };
    assert.equal(hideInternal(ok, { log }), ok);
    assert.equal(logged.length, 1);
  });
});
