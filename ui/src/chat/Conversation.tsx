/**
 * One conversation: the stream from the Agent API (`useStream`, subgraphs on so subagents
 * stream), the message list or empty state, approvals, errors, a stopped run, the composer and
 * the panel (open by itself when it has something to show, on a wide screen, unless the user chose).
 * Edit and retry fork the thread from the checkpoint before the user message (`./fork.ts`).
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
import { checkpointBefore } from "./fork.ts";
import { readHitlRequest, resumeValue } from "./hitl.ts";
import type { Decision } from "./hitl.ts";
import type { AgentState } from "./state.ts";
import { messageText, titleFrom } from "./state.ts";
import { SidePanel } from "../panels/SidePanel.tsx";

const STREAM_MODE = ["values", "messages-tuple", "updates"] as const;

/**
 * A readable message for whatever the stream threw. A refusal of the server (the SDK's
 * `HTTP 429: {"detail": ...}`, e.g. a usage budget spent) shows its `detail` and `hint`.
 */
function errorText(err: unknown): string {
  if (!err) return "";
  const http = err as { status?: unknown; text?: unknown };
  if (err instanceof Error && typeof http.status === "number" && typeof http.text === "string") {
    try {
      const body = JSON.parse(http.text) as { detail?: unknown; hint?: unknown };
      if (typeof body.detail === "string") {
        return typeof body.hint === "string" ? `${body.detail}. ${body.hint}` : body.detail;
      }
    } catch { /* not JSON: the SDK's message */ }
  }
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === "object") {
    const o = err as Record<string, unknown>;
    const msg = o.message ?? o.error ?? o.detail;
    if (typeof msg === "string") return msg;
  }
  return String(err);
}

/** True while the window is at least `px` wide. */
function useWide(px: number): boolean {
  const query = `(min-width: ${px}px)`;
  const [wide, setWide] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const mq = matchMedia(query);
    const on = () => setWide(mq.matches);
    mq.addEventListener("change", on);
    return () => mq.removeEventListener("change", on);
  }, [query]);
  return wide;
}

export function Conversation({ settings, client, threadId, browserId, online, panelChoice, onPanelChoice, onThreadId, onRunStart, onRunDone, header }: {
  settings: UiSettings;
  client: Client;
  threadId: string | null;
  browserId: string | null;
  online: boolean;
  /** The user's own choice for the panel (the header toggle, the close button); null: automatic. */
  panelChoice: boolean | null;
  onPanelChoice: (open: boolean) => void;
  onThreadId: (id: string) => void;
  /** A run starts in `threadId` (null: a new thread is being made) with this first line. */
  onRunStart: (threadId: string | null, title: string) => void;
  onRunDone: () => void;
  header: (activity: boolean, panelOpen: boolean) => ReactNode;
}) {
  const composer = useRef<ComposerHandle>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const [dismissedError, setDismissedError] = useState<unknown>(null);
  // Set by Stop, cleared by the next submit: the run ended because the user stopped it.
  const [stopped, setStopped] = useState(false);
  const [forkError, setForkError] = useState<string | null>(null);
  const wide = useWide(1180);

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
  const hasActivity = todos.length > 0 || Object.values(files).some(Boolean) || subagents.length > 0;
  const panelOpen = panelChoice ?? (wide && hasActivity);

  const hitl = useMemo(() => {
    for (const it of stream.interrupts ?? []) {
      const actions = readHitlRequest(it.value);
      if (actions) return { id: it.id ?? "", actions };
    }
    return null;
  }, [stream.interrupts]);
  const pending = !hitl && !stream.isLoading ? stream.interrupt : undefined;
  // A run that was cancelled leaves nodes to run and no interrupt value, which the SDK reports
  // as a breakpoint; this UI sets no breakpoints, so that is a stopped run, not a question.
  const wasStopped = stopped || (pending !== undefined && pending.value === undefined);
  const otherInterrupt = pending !== undefined && pending.value !== undefined ? pending : undefined;

  useEffect(() => {
    composer.current?.focus();
    setStopped(false);
    setForkError(null);
  }, [threadId]);
  useEffect(() => { if (!stream.isLoading && !hitl) composer.current?.focus(); }, [stream.isLoading, hitl]);

  useEffect(() => {
    const el = scroller.current;
    if (el && stickToBottom.current) el.scrollTop = el.scrollHeight;
  });

  const send = (text: string) => {
    stickToBottom.current = true;
    setDismissedError(stream.error);
    setStopped(false);
    setForkError(null);
    onRunStart(threadId, titleFrom(text));
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

  /** Resends user message `m` as `text` on a new branch from the checkpoint before it. */
  const resend = async (m: Message, text: string) => {
    if (!threadId || !m.id) return send(text);
    stickToBottom.current = true;
    setDismissedError(stream.error);
    setStopped(false);
    setForkError(null);
    let checkpoint: Awaited<ReturnType<typeof checkpointBefore>>;
    try {
      checkpoint = await checkpointBefore(client, threadId, m.id);
    } catch (err) {
      setForkError(`Cannot edit the message: reading the conversation's history failed (${errorText(err)}). Try again.`);
      return;
    }
    // The message was never saved (the run failed before its first step): send it as new.
    if (!checkpoint) return send(text);
    onRunStart(threadId, titleFrom(text));
    const index = messages.findIndex((x) => x.id === m.id);
    const edited = { type: "human", content: text, id: m.id } as Message;
    void stream.submit(
      { messages: [edited] } as Partial<AgentState>,
      {
        checkpoint,
        streamSubgraphs: true,
        streamMode: [...STREAM_MODE],
        optimisticValues: (prev: AgentState) => ({ ...prev, messages: [...messages.slice(0, Math.max(index, 0)), edited], todos: prev.todos, files: prev.files }),
      },
    );
  };

  const lastHuman = [...messages].reverse().find((m) => m.type === "human");
  const retry = lastHuman ? () => void resend(lastHuman, messageText(lastHuman.content)) : undefined;

  const stop = () => {
    setStopped(true);
    void stream.stop();
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

  const runError = stream.error && stream.error !== dismissedError ? errorText(stream.error) : null;
  const error = forkError ?? runError;
  const empty = !messages.length && !stream.isLoading && !stream.isThreadLoading;
  const activity = subagents.some((s) => s.status === "running") || todos.some((t) => t.status === "in_progress");

  return (
    <>
      <main className="main">
        {header(activity, panelOpen)}
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
              <MessageList messages={messages} toolCallsOf={toolCallsOf} subagentOf={(id) => stream.getSubagent(id)} streaming={stream.isLoading}
                onEdit={(m, text) => void resend(m, text)} onRetry={!hitl && !stream.isThreadLoading ? retry : undefined} />
            )}
            {hitl && !stream.isLoading && <ApprovalCard key={hitl.id} actions={hitl.actions} onResume={resume} busy={stream.isLoading} />}
            {wasStopped && !stream.isLoading && !error && messages.length > 0 && (
              <div className="notice" role="status" data-testid="run-stopped">
                <Icon name="stop" />
                <div className="notice-text">
                  <strong>{stopped ? "You stopped this reply." : "This reply was stopped before it finished."}</strong>
                  <span>Send a new message, or retry to run the last one again.</span>
                </div>
                {retry && <button type="button" className="btn" onClick={retry}><Icon name="retry" />Retry</button>}
              </div>
            )}
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
                {retry && !forkError && <button type="button" className="btn" onClick={retry}><Icon name="retry" />Retry</button>}
                <button type="button" className="icon-btn" aria-label="Dismiss" onClick={() => { setDismissedError(stream.error); setForkError(null); }}><Icon name="close" /></button>
              </div>
            )}
          </div>
        </div>
        <div className="composer-wrap">
          <div className="column">
            <Composer ref={composer} onSend={send} onStop={stop} busy={stream.isLoading} disabled={!online || !!hitl}
              placeholder={hitl ? "Review the pending action above to continue" : online ? `Message ${settings.app_name}` : "Offline: waiting for the connection"} />
            <p className="composer-hint">Enter to send, Shift+Enter for a new line</p>
          </div>
        </div>
      </main>
      {panelOpen && <SidePanel todos={todos} files={files as Record<string, never>} subagents={subagents} onClose={() => onPanelChoice(false)} />}
    </>
  );
}
