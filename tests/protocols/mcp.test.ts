/**
 * `/mcp` through the MCP SDK's client (Streamable HTTP): every assistant is a tool; a call
 * runs the assistant through the server's runs (visible in the Agent API, owned by the
 * caller) and answers with its final message; failures are `isError` results; progress
 * notifications stream when the client asks. Under anonymous and under identity_a
 * (GoTrue-style server), where a call without a token gets 401.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { connectMcp, type ProtocolServer, type Provider, startProtocolServer } from "./_setup.ts";

const text = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

for (const provider of ["anonymous", "identity_a"] as Provider[]) {
  describe(`MCP under ${provider}`, () => {
    let srv: ProtocolServer;
    before(async () => {
      srv = await startProtocolServer(provider);
    });
    after(async () => {
      await srv?.close();
    });

    it("lists each assistant as a tool with its description and the message/thread_id input", async () => {
      const client = await connectMcp(srv.url, await srv.headersFor("ada"));
      try {
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name).sort();
        assert.deepEqual(names, ["echo", "fail", "interrupt", "slow"]);
        const echo = tools.find((t) => t.name === "echo")!;
        assert.equal(echo.description, "Repeats what you say.");
        assert.deepEqual(echo.inputSchema.required, ["message"]);
        assert.deepEqual(Object.keys(echo.inputSchema.properties ?? {}).sort(), ["message", "thread_id"]);
        assert.deepEqual(Object.keys((echo.outputSchema?.properties ?? {}) as object).sort(), [
          "answer",
          "run_id",
          "thread_id",
        ]);
      } finally {
        await client.close();
      }
    });

    it("runs the assistant and answers with its final message; a thread_id continues the conversation", async () => {
      const headers = await srv.headersFor("ada");
      const client = await connectMcp(srv.url, headers);
      try {
        const first = await client.callTool({ name: "echo", arguments: { message: "hello" } }) as CallToolResult;
        assert.notEqual(first.isError, true, text(first));
        assert.equal(text(first), "echo: hello");
        const { thread_id, run_id } = first.structuredContent as { thread_id: string; run_id: string };

        const second = await client.callTool({
          name: "echo",
          arguments: { message: "again", thread_id },
        }) as CallToolResult;
        assert.equal(text(second), "echo: again");
        assert.equal((second.structuredContent as { thread_id: string }).thread_id, thread_id);

        // The runs are the Agent API's: the thread holds both turns, owned by the caller.
        const api = srv.client(headers);
        const state = await api.threads.getState(thread_id);
        assert.equal((state.values as { messages: unknown[] }).messages.length, 4);
        const run = await api.runs.get(thread_id, run_id);
        assert.equal(run.status, "success");
        if (provider === "identity_a") {
          const thread = await api.threads.get(thread_id);
          assert.match(String(thread.metadata?.owner), /.+/);
          // Another user cannot continue (or see) it.
          const bob = await connectMcp(srv.url, await srv.headersFor("bob"));
          try {
            const denied = await bob.callTool({
              name: "echo",
              arguments: { message: "mine now", thread_id },
            }) as CallToolResult;
            assert.equal(denied.isError, true);
            assert.match(text(denied), /not found/);
          } finally {
            await bob.close();
          }
        }
      } finally {
        await client.close();
      }
    });

    it("a thread_id that names no thread of the caller is an isError naming it, and no thread is created", async () => {
      const headers = await srv.headersFor("ada");
      const client = await connectMcp(srv.url, headers);
      const api = srv.client(headers);
      try {
        for (const thread_id of ["abc", crypto.randomUUID()]) {
          const r = await client.callTool({ name: "echo", arguments: { message: "hi", thread_id } }) as CallToolResult;
          assert.equal(r.isError, true);
          assert.match(text(r), new RegExp(`Thread "${thread_id}" not found.*omit thread_id to start a new thread`));
          await assert.rejects(api.threads.get(thread_id), /404|not found/i);
        }
      } finally {
        await client.close();
      }
    });

    it("text that cannot be stored (U+0000, a lone surrogate) is an isError naming the argument, and starts no run", async () => {
      const headers = await srv.headersFor("dora");
      const client = await connectMcp(srv.url, headers);
      const threadCount = async () => (await srv.client(headers).threads.search({ limit: 1000 })).length;
      const before = await threadCount();
      try {
        const cases: Array<[Record<string, string>, RegExp]> = [
          [{ message: "a\u0000b" }, /arguments\.message contains a NUL character \(U\+0000\)/],
          [{ message: "a\uD800b" }, /arguments\.message contains an unpaired UTF-16 surrogate/],
          [{ message: "hi", thread_id: "t\u0000" }, /arguments\.thread_id contains a NUL character/],
        ];
        for (const [args, expected] of cases) {
          const r = await client.callTool({ name: "echo", arguments: args }) as CallToolResult;
          assert.equal(r.isError, true);
          assert.match(text(r), expected);
          assert.doesNotMatch(text(r), /unsupported Unicode|escape sequence/);
        }
        assert.equal(await threadCount(), before);
      } finally {
        await client.close();
      }
    });

    it("returns failures as isError results: a failing run, an unknown tool, a bad argument", async () => {
      const client = await connectMcp(srv.url, await srv.headersFor("ada"));
      try {
        const failed = await client.callTool({ name: "fail", arguments: { message: "go" } }) as CallToolResult;
        assert.equal(failed.isError, true);
        assert.match(text(failed), /the backend is down/);
        assert.match(text(failed), /thread "[^"]+", run "[^"]+"/);

        const unknown = await client.callTool({ name: "nope", arguments: { message: "x" } }) as CallToolResult;
        assert.equal(unknown.isError, true);
        assert.match(text(unknown), /nope/);

        const bad = await client.callTool({ name: "echo", arguments: { message: "" } }) as CallToolResult;
        assert.equal(bad.isError, true);
        assert.match(text(bad), /message/);

        const waiting = await client.callTool({ name: "interrupt", arguments: { message: "go" } }) as CallToolResult;
        assert.equal(waiting.isError, true);
        assert.match(text(waiting), /Approval required|waiting/);
      } finally {
        await client.close();
      }
    });

    it("a request whose params do not fit the method is -32602 with a short line naming the fields, not a schema dump", async () => {
      const headers = await srv.headersFor("ada");
      const post = async (body: unknown) => {
        const res = await fetch(`${srv.url}/mcp`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify(body),
        });
        assert.equal(res.status, 200);
        return await res.json() as { id: unknown; error?: { code: number; message: string } };
      };
      const cases: Array<[string, unknown, RegExp]> = [
        [
          "initialize",
          {},
          /^Invalid params for initialize: "params\.protocolVersion" is missing \(expected string\); "params\.capabilities" is missing \(expected object\); "params\.clientInfo" is missing \(expected object\)$/,
        ],
        ["initialize", undefined, /^Invalid params for initialize: "params" is missing \(expected object\)$/],
        ["tools/call", {}, /^Invalid params for tools\/call: "params\.name" is missing \(expected string\)$/],
        [
          "tools/list",
          { cursor: 5 },
          /^Invalid params for tools\/list: "params\.cursor": expected string, received number$/,
        ],
      ];
      for (const [method, params, expected] of cases) {
        const r = await post({ jsonrpc: "2.0", id: 9, method, ...(params === undefined ? {} : { params }) });
        assert.equal(r.id, 9);
        assert.equal(r.error?.code, -32602, `${method}: ${JSON.stringify(r)}`);
        assert.match(r.error!.message, expected);
        assert.ok(r.error!.message.length < 300 && !r.error!.message.includes("\n"), r.error!.message);
      }
      // A well-formed initialize still goes through to the SDK.
      const ok = await fetch(`${srv.url}/mcp`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
        }),
      });
      assert.match(await ok.text(), /"serverInfo":\{"name":"agentcli"/);
    });

    it("streams progress notifications when the client passes a progressToken", async () => {
      const client = await connectMcp(srv.url, await srv.headersFor("ada"));
      try {
        const progress: Array<{ progress: number; message?: string }> = [];
        const result = await client.callTool({ name: "echo", arguments: { message: "with progress" } }, undefined, {
          onprogress: (p) => void progress.push(p),
        }) as CallToolResult;
        assert.equal(text(result), "echo: with progress");
        assert.ok(progress.length >= 1, "at least one progress notification");
        assert.deepEqual(progress.map((p) => p.progress), progress.map((_, i) => i + 1));
        assert.ok(progress.some((p) => p.message === "answering"), JSON.stringify(progress));
      } finally {
        await client.close();
      }
    });

    it("a client that disconnects mid-call cancels the run; GET and DELETE answer 405", async () => {
      const headers = await srv.headersFor("cleo");
      const client = await connectMcp(srv.url, headers);
      const call = client.callTool({ name: "slow", arguments: { message: "take long" } }).catch((e: Error) => e);
      const api = srv.client(headers);
      let threadId: string | undefined;
      for (let i = 0; i < 200 && !threadId; i++) {
        const running = await api.threads.search({ status: "busy", metadata: { graph_id: "slow" } });
        threadId = running[0]?.thread_id;
        if (!threadId) await new Promise((r) => setTimeout(r, 25));
      }
      assert.ok(threadId, "the slow run started");
      await client.close();
      assert.ok(await call instanceof Error);
      let status = "";
      for (let i = 0; i < 200 && status !== "interrupted"; i++) {
        status = (await api.runs.list(threadId))[0]?.status ?? "";
        if (status !== "interrupted") await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(status, "interrupted");

      for (const method of ["GET", "DELETE"]) {
        const res = await fetch(`${srv.url}/mcp`, { method, headers: { ...headers, accept: "text/event-stream" } });
        assert.equal(res.status, 405, method);
        assert.equal(res.headers.get("allow"), "POST");
        await res.body?.cancel();
      }
    });

    if (provider === "identity_a") {
      it("refuses calls without a valid token with 401, like the Agent API", async () => {
        await assert.rejects(connectMcp(srv.url), (err: Error) => /401|Unauthorized|authenticate/i.test(String(err)));
        await assert.rejects(
          connectMcp(srv.url, { authorization: "Bearer not-a-token" }),
          (err: Error) => /401|Unauthorized|authenticate/i.test(String(err)),
        );
        const res = await fetch(`${srv.url}/mcp`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: "{}",
        });
        assert.equal(res.status, 401);
        assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
        assert.equal(typeof ((await res.json()) as { detail?: unknown }).detail, "string");
      });
    }
  });
}
