/**
 * The multi-step benchmark graph: `ChatOpenAI` (against the local model server, bench/model.ts
 * `--steps n`, which asks for the tool `step` n times, then answers) bound to one tool, and
 * the tool node, in a loop until the model stops calling tools. Both servers in bench/steps.ts
 * serve this module as the graph "steps".
 */
import { ChatOpenAI } from "@langchain/openai";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import type { AIMessage } from "@langchain/core/messages";
import { z } from "zod";

const step = tool(async ({ i }) => `step ${i} done`, {
  name: "step",
  description: "Does one step of the work.",
  schema: z.object({ i: z.number() }),
});

const model = new ChatOpenAI({
  model: "gpt-4o-mini",
  apiKey: process.env.OPENAI_API_KEY ?? "bench",
  configuration: { baseURL: process.env.OPENAI_BASE_URL },
  maxRetries: 0,
}).bindTools([step]);

async function agent(state: typeof MessagesAnnotation.State) {
  return { messages: [await model.invoke(state.messages)] };
}

const next = (state: typeof MessagesAnnotation.State) =>
  (state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END;

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", agent)
  .addNode("tools", new ToolNode([step]))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", next, ["tools", END])
  .addEdge("tools", "agent")
  .compile();
