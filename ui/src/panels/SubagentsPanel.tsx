import type { SubagentStreamInterface } from "@langchain/langgraph-sdk/react";
import { SubagentCard } from "../chat/SubagentCard.tsx";

/** Every subagent dispatched in this thread (through `task`), newest last, with live output. */
export function SubagentsPanel({ subagents }: { subagents: SubagentStreamInterface[] }) {
  if (!subagents.length) return <p className="panel-empty">When the agent delegates work to a subagent, its progress streams here.</p>;
  return (
    <div className="subagents" data-testid="subagents-panel">
      {subagents.map((s) => <SubagentCard key={s.id} sub={s} compact />)}
    </div>
  );
}
