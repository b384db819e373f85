/**
 * The conformance kit for model providers (`agentcli/testing`): text streams token by token,
 * a tool call round-trips (the call's name and arguments, then the tool result reaching the
 * model), and a missing credential is an error naming its variable. The provider talks to a
 * local server speaking its real wire protocol that the plugin author starts and scripts.
 *
 * @example
 * import { modelProviderConformance } from "agentcli/testing";
 * import plugin from "./my-model.ts";
 * modelProviderConformance({ plugin, model: "my_llm:small", start: async () => startMyLlmFake() });
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { type Env, type Plugin, PluginDriver, validatePlugins } from "../kernel/index.ts";
import { createChatModel } from "../harness/index.ts";

/** A reply the fake provider server gives next: text, or tool calls. */
export interface ScriptedModelReply {
  text?: string;
  toolCalls?: Array<{ name: string; args: Record<string, unknown>; id?: string }>;
}

/** A request the fake provider server received, in one shape across wire protocols. */
export interface SeenModelRequest {
  stream: boolean;
  messages: Array<
    { role: "user" | "assistant" | "tool"; content: string; toolCalls?: Array<{ name: string; args: unknown }> }
  >;
  /** Names of the tools offered to the model. */
  tools: string[];
}

/** A local server speaking the provider's wire protocol, and the env that points the plugin at it. */
export interface ModelProviderHarness {
  env: Env;
  script(...replies: ScriptedModelReply[]): void;
  lastRequest(): SeenModelRequest | undefined;
  close(): Promise<void>;
}

export interface ModelProviderEntry {
  plugin: Plugin;
  /** A `provider:model` of this plugin, e.g. `"my_llm:small"`. */
  model: string;
  start(): Promise<ModelProviderHarness>;
}

/** The shape LangChain chat models share; the kit needs no LangChain import of its own. */
interface ChatModelLike {
  stream(messages: unknown[]): Promise<AsyncIterable<{ content: unknown }>>;
  bindTools?(
    tools: unknown[],
  ): {
    invoke(
      messages: unknown[],
    ): Promise<{ content: unknown; tool_calls?: Array<{ name: string; args: unknown; id?: string }> }>;
  };
}

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

/** Registers the suite for one model provider plugin. */
export function modelProviderConformance(entry: ModelProviderEntry): void {
  const prefix = entry.model.slice(0, entry.model.indexOf(":"));
  describe(`model provider conformance: ${prefix}`, () => {
    const [plugin] = validatePlugins([entry.plugin], [`plugin "${String((entry.plugin as { name?: unknown }).name)}"`]);
    const driver = new PluginDriver([plugin!]);
    const spec = plugin!.kind === "model" ? plugin!.model : null;

    test("declares a model provider for the model's prefix, with a builder", () => {
      assert.equal(spec?.prefix, prefix, `the plugin's kind must be "model" with model.prefix "${prefix}"`);
      assert.equal(typeof spec?.createChatModel, "function", "model.createChatModel must build the chat model");
    });

    const withServer = async (fn: (h: ModelProviderHarness) => Promise<void>) => {
      const h = await entry.start();
      try {
        await fn(h);
      } finally {
        await h.close();
      }
    };

    test("streams text token by token", () =>
      withServer(async (h) => {
        h.script({ text: "The quick brown fox jumps." });
        const model = (await createChatModel(entry.model, driver, h.env)) as unknown as ChatModelLike;
        const parts: string[] = [];
        for await (const chunk of await model.stream([{ role: "user", content: "say something" }])) {
          if (typeof chunk.content === "string" && chunk.content) parts.push(chunk.content);
        }
        assert.equal(parts.join(""), "The quick brown fox jumps.");
        assert.ok(parts.length > 1, `expected several chunks, got ${parts.length}`);
        const req = h.lastRequest();
        assert.equal(req?.stream, true);
        assert.equal(req?.messages.at(-1)?.content, "say something");
      }));

    test("calls a tool and uses its result", () =>
      withServer(async (h) => {
        h.script({ toolCalls: [{ name: "get_weather", args: { city: "Lyon" } }] }, { text: "It is sunny in Lyon." });
        const model = (await createChatModel(entry.model, driver, h.env)) as unknown as ChatModelLike;
        assert.equal(typeof model.bindTools, "function", "the chat model must support bindTools");
        const bound = model.bindTools!([weatherTool]);
        const question = { role: "user", content: "weather in Lyon?" };
        const first = await bound.invoke([question]);
        assert.equal(first.tool_calls?.length, 1);
        assert.equal(first.tool_calls![0]!.name, "get_weather");
        assert.deepEqual(first.tool_calls![0]!.args, { city: "Lyon" });
        assert.deepEqual(h.lastRequest()?.tools, ["get_weather"]);
        const result = {
          role: "tool",
          content: "sunny, 24C",
          tool_call_id: first.tool_calls![0]!.id ?? "",
          name: "get_weather",
        };
        const second = await bound.invoke([question, first, result]);
        assert.equal(second.content, "It is sunny in Lyon.");
        const seen = h.lastRequest()!;
        assert.equal(seen.messages.find((m) => m.toolCalls)?.toolCalls?.[0]?.name, "get_weather");
        assert.match(seen.messages.find((m) => m.role === "tool")?.content ?? "", /sunny, 24C/);
      }));

    test("a missing credential is a clear error naming the variable", () =>
      withServer(async (h) => {
        for (const variable of spec?.env ?? []) {
          const env = { ...h.env, [variable]: undefined };
          await assert.rejects(createChatModel(entry.model, driver, env), (err: Error) => {
            assert.match(err.message, new RegExp(`^Cannot run the agent: .*${variable}.* not set; add`));
            return true;
          });
        }
      }));
  });
}
