/**
 * One conversation: the stream from the Agent API (`useStream`, subgraphs on so subagents
 * stream), the message list or empty state, approvals, errors, the composer and the panel.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import type { ReactNode } from "react";
import type { Client, Message } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import type { UseStream } from "@langchain/langgraph-sdk/react";
import type { UiSettings } from "../settings.ts";
import { Icon } from "../icons.tsx";
import { ApprovalCard } from "./ApprovalCard.tsx";
import { Composer } from "./Composer.tsx";
import type { ComposerHandle } from "./Composer.tsx";
import { EmptyState } from "./EmptyState.tsx";
import { MessageList } from "./MessageList.tsx";
import type { ToolCallView } from "./ToolCallCard.tsx";
import { readHitlRequest, resumeValue } from "./hitl.ts";
import type { Decision } from "./hitl.ts";
import type { AgentState } from "./state.ts";
import { titleFrom } from "./state.ts";
import { SidePanel } from "../panels/SidePanel.tsx";

const STREAM_MODE = ["values", "messages-tuple", "updates"] as const;

/** A readable message for whatever the stream threw. */
function errorText(err: unknown): string {
  if (!err) return "";
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === "object") {
    const o = err as Record<string, unknown>;
    const msg = o.message ?? o.error ?? o.detail;
    if (typeof msg === "string") return msg;
  }
  return String(err);
}

export function Conversation({ settings, client, threadId, browserId, online, panelOpen, onPanelClose, onThreadId, onRunDone, header }: {
  settings: UiSettings;
  client: Client;
  threadId: string | null;
  browserId: string | null;
  online: boolean;
  panelOpen: boolean;
  onPanelClose: () => void;
  onThreadId: (id: string) => void;
  onRunDone: () => void;
  header: (activity: boolean) => ReactNode;
}) {
  const composer = useRef<ComposerHandle>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const [dismissedError, setDismissedError] = useState<unknown>(null);

  const stream = useStream({
    assistantId: settings.assistant_id,
    client,
    threadId,
    onThreadId,
    fetchStateHistory: false,
    reconnectOnMount: true,
    filterSubagentMessages: true,
    onFinish: () => onRunDone(),
    onError: () => onRunDone(),
    // The SDK's option overloads are keyed on agent types; our state is a plain record.
  } as never) as unknown as UseStream<AgentState>;

  const values = (stream.values ?? {}) as AgentState;
  const messages = stream.messages as Message[];
  const subagents = useMemo(() => [...stream.subagents.values()], [stream.subagents]);
  const todos = Array.isArray(values.todos) ? values.todos : [];
  const files = values.files && typeof values.files === "object" ? values.files : {};

  const hitl = useMemo(() => {
    for (const it of stream.interrupts ?? []) {
      const actions = readHitlRequest(it.value);
      if (actions) return { id: it.id ?? "", actions };
    }
    return null;
  }, [stream.interrupts]);
  const otherInterrupt = !hitl && !stream.isLoading ? stream.interrupt : undefined;

  useEffect(() => { composer.current?.focus(); }, [threadId]);
  useEffect(() => { if (!stream.isLoading && !hitl) composer.current?.focus(); }, [stream.isLoading, hitl]);

  useEffect(() => {
    const el = scroller.current;
    if (el && stickToBottom.current) el.scrollTop = el.scrollHeight;
  });

  const send = (text: string) => {
    stickToBottom.current = true;
    setDismissedError(stream.error);
    const metadata = threadId ? undefined : { title: titleFrom(text), ...(browserId ? { browser_id: browserId } : {}) };
    void stream.submit(
      { messages: [{ type: "human", content: text }] } as Partial<AgentState>,
      {
        streamSubgraphs: true,
        streamMode: [...STREAM_MODE],
        metadata,
        optimisticValues: (prev: AgentState) => ({
          ...prev,
          messages: [...(prev.messages ?? []), { type: "human", content: text, id: `optimistic-${Date.now()}` } as Message],
        }),
      },
    );
  };

  const resume = (decisions: Decision[]) => {
    stickToBottom.current = true;
    void stream.submit(null, { command: { resume: resumeValue(decisions) }, streamSubgraphs: true, streamMode: [...STREAM_MODE] });
  };

  const toolCallsOf = (m: Message): ToolCallView[] => {
    if (m.type !== "ai") return [];
    return stream.getToolCalls(m as never).map((tc) => ({
      id: tc.id,
      name: tc.call.name,
      args: (tc.call.args ?? {}) as Record<string, unknown>,
      state: tc.state,
      result: tc.result,
    }));
  };

  const error = stream.error && stream.error !== dismissedError ? errorText(stream.error) : null;
  const empty = !messages.length && !stream.isLoading && !stream.isThreadLoading;
  const activity = subagents.some((s) => s.status === "running") || todos.some((t) => t.status === "in_progress");

  return (
    <>
      <main className="main">
        {header(activity)}
        <div className="scroll" ref={scroller} onScroll={(e) => {
          const el = e.currentTarget;
          stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
        }}>
          <div className="column">
            {stream.isThreadLoading && !messages.length && (
              <div className="loading-thread"><span className="skeleton" /><span className="skeleton" /><span className="skeleton short" /></div>
            )}
            {empty && <EmptyState appName={settings.app_name} subtitle={settings.subtitle} prompts={settings.prompts} onPick={send} />}
            {!empty && (
              <MessageList messages={messages} toolCallsOf={toolCallsOf} subagentOf={(id) => stream.getSubagent(id)} streaming={stream.isLoading} />
            )}
            {hitl && !stream.isLoading && <ApprovalCard key={hitl.id} actions={hitl.actions} onResume={resume} busy={stream.isLoading} />}
            {otherInterrupt && (
              <div className="notice"><Icon name="alert" /><div><strong>The agent is waiting for input.</strong><pre>{JSON.stringify(otherInterrupt.value, null, 2)}</pre></div></div>
            )}
            {error && (
              <div className="notice notice-error" role="alert" data-testid="run-error">
                <Icon name="alert" />
                <div className="notice-text">
                  <strong>The agent could not finish this reply.</strong>
                  <span>{error}</span>
                </div>
                <button type="button" className="icon-btn" aria-label="Dismiss" onClick={() => setDismissedError(stream.error)}><Icon name="close" /></button>
              </div>
            )}
          </div>
        </div>
        <div className="composer-wrap">
          <div className="column">
            <Composer ref={composer} onSend={send} onStop={() => void stream.stop()} busy={stream.isLoading} disabled={!online || !!hitl}
              placeholder={hitl ? "Review the pending action above to continue" : online ? `Message ${settings.app_name}` : "Offline: waiting for the connection"} />
            <p className="composer-hint">Enter to send, Shift+Enter for a new line</p>
          </div>
        </div>
      </main>
      {panelOpen && <SidePanel todos={todos} files={files as Record<string, never>} subagents={subagents} onClose={onPanelClose} />}
    </>
  );
}
