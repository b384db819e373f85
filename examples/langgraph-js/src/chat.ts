// Type-only imports written without `import type`, as LangGraph's own examples do.
import { AIMessage, BaseMessage } from "@langchain/core/messages";
import { END, START, StateGraph } from "@langchain/langgraph";
import { getLogger } from "@langchain/langgraph-sdk/logging";
import { ChatState, ChatStateType } from "./state.ts";

const logger = getLogger();
logger.info("chat graph loaded");

function reply(state: ChatStateType): Partial<ChatStateType> {
  const last: BaseMessage | undefined = state.messages.at(-1);
  const text = typeof last?.content === "string" ? last.content : "";
  return { messages: [new AIMessage(`${process.env.GREETING ?? "Hi"}! You said: ${text}`)], turns: 1 };
}

// A Promise of a compiled graph: LangGraph's loader awaits it.
export const graph = Promise.resolve(
  new StateGraph(ChatState).addNode("reply", reply).addEdge(START, "reply").addEdge("reply", END).compile(),
);
