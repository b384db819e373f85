/**
 * The scripted model server streams a reply token by token (`tokens`, `tokenIntervalMs`) in
 * every protocol it speaks, read by the real chat model clients, and tells over HTTP
 * (`GET /_sends`) when each token left it: what the token streaming benchmark measures against.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { createChatModel } from "../../core/harness/index.ts";
import { type ModelServer, startModelServer, type TokenSends } from "../fixtures/model-server/server.ts";

const driver = new PluginDriver(builtinPlugins);
let server: ModelServer;
before(async () => void (server = await startModelServer()));
after(() => server.close());

const PROVIDERS: Array<{ spec: string; env: () => Record<string, string> }> = [
  { spec: "openai:gpt-test", env: () => ({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.openaiBaseUrl }) },
  {
    spec: "anthropic:claude-test",
    env: () => ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.anthropicBaseUrl }),
  },
  {
    spec: "google_genai:gemini-test",
    env: () => ({ GOOGLE_API_KEY: "k", GOOGLE_GENAI_BASE_URL: server.geminiBaseUrl }),
  },
];

for (const p of PROVIDERS) {
  test(`${p.spec}: a reply of 20 tokens streams as 20 text chunks, each send time recorded`, async () => {
    await fetch(`${server.url}/_sends`, { method: "DELETE" });
    server.script({ tokens: 20, tokenIntervalMs: 2 });
    const model = await createChatModel(p.spec, driver, p.env());
    const texts: string[] = [];
    for await (const chunk of await model.stream(`count for ${p.spec}`)) {
      if (typeof chunk.content === "string" && chunk.content) texts.push(chunk.content);
    }
    assert.deepEqual(texts, Array.from({ length: 20 }, (_, i) => ` t${i}`));
    const sends = await (await fetch(`${server.url}/_sends`)).json() as TokenSends[];
    assert.equal(sends.length, 1);
    assert.equal(sends[0]!.prompt, `count for ${p.spec}`);
    assert.equal(sends[0]!.sentAt.length, 20);
    assert.ok(sends[0]!.sentAt.every((t, i) => i === 0 || t >= sends[0]!.sentAt[i - 1]!));
  });
}

test("a scripted text streams as the given number of chunks, and whole when not streamed", async () => {
  server.script({ text: "abcdefghij", tokens: 5 }, { tokens: 3 });
  const model = await createChatModel("openai:gpt-test", driver, {
    OPENAI_API_KEY: "k",
    OPENAI_BASE_URL: server.openaiBaseUrl,
  });
  const texts: string[] = [];
  for await (const chunk of await model.stream("five")) if (chunk.content) texts.push(chunk.content as string);
  assert.deepEqual(texts, ["ab", "cd", "ef", "gh", "ij"]);
  assert.equal((await model.invoke("whole")).content, " t0 t1 t2");
});

test("ten tool-calling steps are ten scripted replies, taken in order by the run they name", async () => {
  server.script(
    ...Array.from({ length: 10 }, (_, i) => ({ when: "run-b", toolCalls: [{ name: "step", args: { i } }] })),
    { when: "run-a", text: "a done" },
  );
  const model = await createChatModel("openai:gpt-test", driver, {
    OPENAI_API_KEY: "k",
    OPENAI_BASE_URL: server.openaiBaseUrl,
  });
  assert.equal((await model.invoke("run-a")).content, "a done");
  for (let i = 0; i < 10; i++) {
    const reply = await model.invoke("run-b");
    assert.deepEqual(reply.tool_calls?.map((c) => c.args), [{ i }]);
  }
  assert.equal(server.pending().length, 0);
});
