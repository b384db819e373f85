import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { CounterOptions } from "./state.ts";

const State = Annotation.Root({ count: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }) });

/** A factory: LangGraph calls it with the run's config; `configurable.step` sets the increment. */
export function makeGraph(config: { configurable?: Record<string, unknown> }) {
  const options: CounterOptions = { step: Number(config.configurable?.step ?? 1) };
  return new StateGraph(State)
    .addNode("increment", (s: typeof State.State) => ({ count: s.count + options.step }))
    .addEdge(START, "increment")
    .addEdge("increment", END)
    .compile();
}
