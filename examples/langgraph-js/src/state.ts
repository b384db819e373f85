import { Annotation, MessagesAnnotation } from "@langchain/langgraph";
import { type RemoveUIMessage, type UIMessage, uiMessageReducer } from "@langchain/langgraph-sdk/react-ui/server";

/** The chat graph's state: LangGraph's messages, how many turns were answered, and its UI messages. */
export const ChatState = Annotation.Root({
  ...MessagesAnnotation.spec,
  turns: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  ui: Annotation<UIMessage[], UIMessage | RemoveUIMessage | (UIMessage | RemoveUIMessage)[]>({
    reducer: uiMessageReducer,
    default: () => [],
  }),
});

export type ChatStateType = typeof ChatState.State;
export interface CounterOptions {
  step: number;
}
