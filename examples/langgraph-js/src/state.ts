import { Annotation, MessagesAnnotation } from "@langchain/langgraph";

/** The chat graph's state: LangGraph's messages, and how many turns were answered. */
export const ChatState = Annotation.Root({
  ...MessagesAnnotation.spec,
  turns: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
});

export type ChatStateType = typeof ChatState.State;
export interface CounterOptions {
  step: number;
}
