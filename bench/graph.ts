/**
 * The benchmark graph: one node calling `ChatOpenAI` against the local OpenAI-wire model
 * server (`bench/model.ts`, from `OPENAI_BASE_URL`). Both servers in `bench/server.ts` serve
 * this same module as the graph "bench".
 */
import { ChatOpenAI } from "@langchain/openai";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";

const model = new ChatOpenAI({
  model: "gpt-4o-mini",
  apiKey: process.env.OPENAI_API_KEY ?? "bench",
  configuration: { baseURL: process.env.OPENAI_BASE_URL },
  maxRetries: 0,
});

async function respond(state: typeof MessagesAnnotation.State) {
  return { messages: [await model.invoke(state.messages)] };
}

export const graph = new StateGraph(MessagesAnnotation).addNode("respond", respond).addEdge("__start__", "respond")
  .compile();
