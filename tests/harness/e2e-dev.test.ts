/**
 * End to end through `agentcli dev` and `@langchain/langgraph-sdk`: the agent writes a user
 * memory file in one thread and reads it back in another; a second user does not see it.
 * Users come from the development auth bypass header (`x-agentcli-dev-user`).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type DevServer, startDevServer } from "../fixtures/dev-server.ts";

let model: ModelServer;
let dev: DevServer;
let url: string;

before(async () => {
  model = await startModelServer();
  dev = await startDevServer({
    fixture: "memory",
    env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: model.openaiBaseUrl },
  });
  url = dev.url;
});

after(async () => {
  await dev?.stop();
  await model?.close();
});

function clientFor(user: string): Client {
  return new Client({ apiUrl: url, defaultHeaders: { "x-agentcli-dev-user": user } });
}

async function turn(user: string, text: string): Promise<Record<string, unknown>> {
  const client = clientFor(user);
  const thread = await client.threads.create();
  return (await client.runs.wait(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content: text }] },
  })) as Record<string, unknown>;
}

test("a user memory written in one thread is read in the next; another user does not see it", async () => {
  model.script(
    {
      toolCalls: [{
        name: "edit_file",
        args: {
          file_path: "/memories/user/AGENTS.md",
          old_string: "User notes:",
          new_string: "User notes:\n- name is Ada",
        },
      }],
    },
    { text: "Nice to meet you, Ada." },
  );
  await turn("ada", "my name is Ada");
  assert.match(model.requests[0].system, /MARKER-E2E/);
  assert.equal(model.requests[1].messages.filter((m) => m.role === "tool").length, 1);
  assert.match(model.requests[1].messages.find((m) => m.role === "tool")!.content, /Successfully replaced/);

  model.script({ text: "You are Ada." });
  await turn("ada", "who am I?");
  assert.match(model.requests.at(-1)!.system, /name is Ada/);

  model.script({ text: "I do not know you yet." });
  await turn("grace", "who am I?");
  const graceReq = model.requests.at(-1)!;
  assert.doesNotMatch(graceReq.system, /Ada/);
  assert.match(graceReq.system, /User notes:/);
});
