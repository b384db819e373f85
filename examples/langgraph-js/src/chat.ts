// Type-only imports written without `import type`, as LangGraph's own examples do.
import { AIMessage, BaseMessage } from "@langchain/core/messages";
import { END, LangGraphRunnableConfig, START, StateGraph } from "@langchain/langgraph";
import { getLogger } from "@langchain/langgraph-sdk/logging";
import { typedUi } from "@langchain/langgraph-sdk/react-ui/server";
import { ChatState, ChatStateType } from "./state.ts";

const logger = getLogger();
logger.info("chat graph loaded");

function reply(state: ChatStateType, config: LangGraphRunnableConfig): Partial<ChatStateType> {
  const last: BaseMessage | undefined = state.messages.at(-1);
  const text = typeof last?.content === "string" ? last.content : "";
  const message = new AIMessage({
    id: crypto.randomUUID(),
    content: `${process.env.GREETING ?? "Hi"}! You said: ${text}`,
  });
  // A generative UI message beside the reply: the "greeting" component of src/ui/ renders it.
  typedUi(config).push({ name: "greeting", props: { who: text } }, { message });
  return { messages: [message], turns: 1 };
}

// A Promise of a compiled graph: LangGraph's loader awaits it.
export const graph = Promise.resolve(
  new StateGraph(ChatState).addNode("reply", reply).addEdge(START, "reply").addEdge("reply", END).compile(),
);
