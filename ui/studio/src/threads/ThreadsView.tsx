/** Threads and runs: the thread list; for the selected thread its runs, a run form, the live events. */
import { useEffect, useState } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import type { Assistants } from "../useAssistants.ts";
import type { RunStream } from "../useRunStream.ts";
import { errorMessage } from "../connection.ts";
import { AssistantPicker } from "../assistants/AssistantPicker.tsx";
import { ThreadList } from "./ThreadList.tsx";
import { RunList } from "./RunList.tsx";
import { RunForm } from "./RunForm.tsx";
import { EventLog } from "./EventLog.tsx";

interface Props {
  client: Client;
  assistants: Assistants;
  stream: RunStream;
  threadId: string | null;
  onThread: (id: string) => void;
  onOpen: (id: string) => void;
  onRun: (threadId: string, runId: string) => void;
}

export function ThreadsView({ client, assistants, stream, threadId, onThread, onOpen, onRun }: Props) {
  const [refresh, setRefresh] = useState(0);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setRefresh((n) => n + 1), [stream.running, stream.runId]);
  const newThread = async () => {
    try {
      onThread((await client.threads.create()).thread_id);
      setRefresh((n) => n + 1);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  const assistantId = assistants.selected?.assistant_id;
  return (
    <section className="split" data-testid="threads-view">
      <div>
        <div className="toolbar">
          <button onClick={() => void newThread()} data-testid="thread-new">New thread</button>
        </div>
        <ThreadList client={client} selected={threadId} onSelect={onThread} refreshKey={refresh} />
      </div>
      <div className="detail">
        {error && <p className="banner error" role="alert">{error}</p>}
        {!threadId ? <p className="muted">Choose a thread, or start a new one.</p> : (
          <>
            <div className="toolbar">
              <span className="mono small" data-testid="thread-id">{threadId}</span>
              <AssistantPicker assistants={assistants} />
              <button onClick={() => onOpen(threadId)} data-testid="open-timeline">Timeline</button>
            </div>
            <RunList client={client} threadId={threadId} refreshKey={refresh} onJoin={(r) => void stream.join(threadId, r)} onTrace={(r) => onRun(threadId, r)} />
            <RunForm busy={stream.running || !assistantId} onStart={(o) => assistantId && void stream.start({ ...o, threadId, assistantId })} />
            <EventLog stream={stream} />
          </>
        )}
      </div>
    </section>
  );
}
