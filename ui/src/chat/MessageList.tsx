/**
 * The conversation: user bubbles, agent replies in markdown, tool calls as cards, subagents
 * inline; under each message its actions (copy; edit-and-resend on a user message; retry on
 * the last answer).
 */
import { useState } from "react";
import type { Message } from "@langchain/langgraph-sdk";
import type { SubagentStreamInterface } from "@langchain/langgraph-sdk/react";
import { Icon } from "../icons.tsx";
import { Markdown } from "./Markdown.tsx";
import { MessageActions } from "./MessageActions.tsx";
import { MessageEditor } from "./MessageEditor.tsx";
import { SubagentCard } from "./SubagentCard.tsx";
import { ToolCallCard } from "./ToolCallCard.tsx";
import type { ToolCallView } from "./ToolCallCard.tsx";
import { messageText } from "./state.ts";

export interface MessageListProps {
  messages: Message[];
  toolCallsOf: (m: Message) => ToolCallView[];
  subagentOf: (toolCallId: string) => SubagentStreamInterface | undefined;
  streaming: boolean;
  /** Resend `message` (a user message) as `text`, from the point before it. */
  onEdit: (message: Message, text: string) => void;
  /** Run the last question again; undefined when there is nothing to retry. */
  onRetry?: () => void;
}

export function MessageList({ messages, toolCallsOf, subagentOf, streaming, onEdit, onRetry }: MessageListProps) {
  const [editing, setEditing] = useState<string | null>(null);
  const visible = messages.filter((m) => m.type === "human" || m.type === "ai");
  const last = visible[visible.length - 1];
  const thinking = streaming && (!last || last.type === "human");
  // One toolbar per answer: under the last message of each run of agent messages.
  const endsTurn = (i: number) => visible[i]!.type === "ai" && visible[i + 1]?.type !== "ai";
  const turnText = (i: number) => {
    let start = i;
    while (start > 0 && visible[start - 1]!.type === "ai") start--;
    return visible.slice(start, i + 1).map((m) => messageText(m.content)).filter(Boolean).join("\n\n");
  };
  return (
    <ol className="messages" aria-live="polite">
      {visible.map((m, i) => {
        const text = messageText(m.content);
        const key = m.id ?? String(i);
        if (m.type === "human") {
          if (editing === key) {
            return (
              <li key={key} className="msg msg-human editing" data-testid="msg-human">
                <MessageEditor initial={text} onCancel={() => setEditing(null)} onSend={(t) => { setEditing(null); onEdit(m, t); }} />
              </li>
            );
          }
          return (
            <li key={key} className="msg msg-human" data-testid="msg-human">
              <div className="bubble">{text}</div>
              <MessageActions text={text} disabled={streaming} onEdit={() => setEditing(key)} />
            </li>
          );
        }
        const calls = toolCallsOf(m);
        const isLast = m === last;
        const continues = i > 0 && visible[i - 1]!.type === "ai";
        return (
          <li key={key} className={`msg msg-ai ${continues ? "cont" : ""}`} data-testid="msg-ai">
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
              {endsTurn(i) && !(isLast && streaming) && (
                <MessageActions text={turnText(i)} disabled={streaming} onRetry={isLast ? onRetry : undefined} />
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
