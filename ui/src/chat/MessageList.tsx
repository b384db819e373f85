/** The conversation: user bubbles, agent replies in markdown, tool calls as cards, subagents inline. */
import type { Message } from "@langchain/langgraph-sdk";
import type { SubagentStreamInterface } from "@langchain/langgraph-sdk/react";
import { Icon } from "../icons.tsx";
import { Markdown } from "./Markdown.tsx";
import { SubagentCard } from "./SubagentCard.tsx";
import { ToolCallCard } from "./ToolCallCard.tsx";
import type { ToolCallView } from "./ToolCallCard.tsx";
import { messageText } from "./state.ts";

export interface MessageListProps {
  messages: Message[];
  toolCallsOf: (m: Message) => ToolCallView[];
  subagentOf: (toolCallId: string) => SubagentStreamInterface | undefined;
  streaming: boolean;
}

export function MessageList({ messages, toolCallsOf, subagentOf, streaming }: MessageListProps) {
  const visible = messages.filter((m) => m.type === "human" || m.type === "ai");
  const last = visible[visible.length - 1];
  const thinking = streaming && (!last || last.type === "human");
  return (
    <ol className="messages" aria-live="polite">
      {visible.map((m, i) => {
        const text = messageText(m.content);
        if (m.type === "human") {
          return <li key={m.id ?? i} className="msg msg-human" data-testid="msg-human"><div className="bubble">{text}</div></li>;
        }
        const calls = toolCallsOf(m);
        const isLast = m === last;
        const continues = i > 0 && visible[i - 1]!.type === "ai";
        return (
          <li key={m.id ?? i} className={`msg msg-ai ${continues ? "cont" : ""}`} data-testid="msg-ai">
            <div className="avatar" aria-hidden><Icon name="sparkle" /></div>
            <div className="msg-body">
              {text && <Markdown text={text} />}
              {isLast && streaming && !calls.length && <span className="caret" aria-hidden />}
              {calls.length > 0 && (
                <div className="tool-calls">
                  {calls.map((c) => {
                    const sub = c.name === "task" ? subagentOf(c.id) : undefined;
                    return sub ? <SubagentCard key={c.id} sub={sub} /> : <ToolCallCard key={c.id} call={c} />;
                  })}
                </div>
              )}
            </div>
          </li>
        );
      })}
      {thinking && (
        <li className="msg msg-ai" aria-label="The agent is thinking">
          <div className="avatar" aria-hidden><Icon name="sparkle" /></div>
          <div className="msg-body"><span className="typing"><span /><span /><span /></span></div>
        </li>
      )}
    </ol>
  );
}
