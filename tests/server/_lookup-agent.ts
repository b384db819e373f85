/**
 * The smallest LangChain agent with a tool (bench/traces.ts runs the same one): `ChatOpenAI`
 * against the scripted model server and a `lookup` tool answering `result for <q>`; a run
 * scripted `{ toolCalls: [lookup] }, { text }` makes two model calls and one tool call.
 */
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { z } from "zod";

export function lookupAgent(openaiBaseUrl: string) {
  const lookup = tool(async ({ q }) => `result for ${q}`, {
    name: "lookup",
    description: "Looks something up",
    schema: z.object({ q: z.string() }),
  });
  return createAgent({
    model: new ChatOpenAI({ model: "gpt-test", apiKey: "sk-test", configuration: { baseURL: openaiBaseUrl } }),
    tools: [lookup],
  });
}
