/** A subagent dispatched through the `task` tool: its name, task, status and streamed output. */
import type { SubagentStreamInterface } from "@langchain/langgraph-sdk/react";
import { Icon } from "../icons.tsx";
import { Markdown } from "./Markdown.tsx";
import { messageText } from "./state.ts";

const STATUS: Record<string, string> = { pending: "Queued", running: "Working", complete: "Done", error: "Failed" };

/** The text a subagent has produced so far: its final result, else its latest AI message. */
export function subagentOutput(s: SubagentStreamInterface): string {
  if (s.result) return s.result;
  const ai = [...s.messages].reverse().find((m) => m.type === "ai" && messageText(m.content));
  return ai ? messageText(ai.content) : "";
}

export function SubagentCard({ sub, compact }: { sub: SubagentStreamInterface; compact?: boolean }) {
  const name = String(sub.toolCall.args.subagent_type ?? "subagent");
  const task = String(sub.toolCall.args.description ?? "");
  const output = subagentOutput(sub);
  return (
    <div className={`subagent-card status-${sub.status}`} data-testid="subagent-card" data-status={sub.status}>
      <div className="subagent-head">
        <span className="subagent-avatar"><Icon name="bot" /></span>
        <div className="subagent-title">
          <strong>{name}</strong>
          {task && <span className="subagent-task" title={task}>{task}</span>}
        </div>
        <span className={`pill pill-${sub.status}`}>{sub.status === "running" && <span className="spinner" />}{STATUS[sub.status] ?? sub.status}</span>
      </div>
      {output && (
        <div className={`subagent-output ${compact ? "compact" : ""}`} data-testid="subagent-output">
          {compact ? <p>{output}</p> : <Markdown text={output} />}
        </div>
      )}
    </div>
  );
}
