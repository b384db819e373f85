/** Timeline and time travel: a thread's checkpoints (paginated, virtualised) and the chosen one's state. */
import { useCallback, useEffect, useRef, useState } from "react";
import type { Client, ThreadState } from "@langchain/langgraph-sdk";
import type { Assistants } from "../useAssistants.ts";
import type { RunStream } from "../useRunStream.ts";
import { errorMessage } from "../connection.ts";
import { VirtualList } from "../VirtualList.tsx";
import { CheckpointView } from "./CheckpointView.tsx";

const PAGE = 50;

interface Props {
  client: Client;
  assistants: Assistants;
  stream: RunStream;
  threadId: string | null;
  /** The chosen checkpoint (from the address bar); null: the newest. */
  checkpointId: string | null;
  onCheckpoint: (id: string | null) => void;
}

export function TimelineView({ client, assistants, stream, threadId, checkpointId, onCheckpoint }: Props) {
  const [history, setHistory] = useState<ThreadState[]>([]);
  const [done, setDone] = useState(false);
  // A linked checkpoint not in the pages loaded so far, read on its own.
  const [linked, setLinked] = useState<ThreadState | null>(null);
  const [nodes, setNodes] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const loading = useRef(false);
  const load = useCallback(async (before: ThreadState | null) => {
    if (!threadId || loading.current) return;
    loading.current = true;
    try {
      const page = await client.threads.getHistory(threadId, {
        limit: PAGE,
        before: before ? { configurable: { checkpoint_id: before.checkpoint.checkpoint_id } } : undefined,
      });
      setHistory((prev) => (before ? prev.concat(page) : page));
      setDone(page.length < PAGE);
      setError(null);
    } catch (err) {
      setError(`Cannot read the history: ${errorMessage(err)}`);
    } finally {
      loading.current = false;
    }
  }, [client, threadId]);
  const ran = useRef(stream.running);
  useEffect(() => {
    // A run that ends makes a newer checkpoint: show the newest (but keep a linked one on first load).
    if (ran.current && !stream.running) onCheckpoint(null);
    ran.current = stream.running;
    void load(null);
  }, [load, stream.running]);
  const index = checkpointId ? history.findIndex((s) => s.checkpoint.checkpoint_id === checkpointId) : 0;
  useEffect(() => {
    setLinked(null);
    if (!threadId || !checkpointId || index >= 0 || history.length === 0) return;
    client.threads.getState(threadId, checkpointId).then(setLinked, (err) => setError(`Cannot read checkpoint ${checkpointId}: ${errorMessage(err)}`));
  }, [client, threadId, checkpointId, index, history.length]);
  const selected = index;
  const assistantId = assistants.selected?.assistant_id;
  useEffect(() => {
    if (!assistantId) return;
    client.assistants.getGraph(assistantId).then((g) => setNodes(g.nodes.map((n) => String(n.id)).filter((n) => !n.startsWith("__"))), () => setNodes([]));
  }, [client, assistantId]);
  if (!threadId) return <p className="muted pane">Choose a thread in Threads first.</p>;
  const state = selected >= 0 ? history[selected] : linked;
  const previous = selected >= 0 ? history[selected + 1] ?? null : null;
  const fork = async (values: unknown, asNode: string | undefined) => {
    await client.threads.updateState(threadId, { values, asNode, checkpointId: state!.checkpoint.checkpoint_id ?? undefined });
    await load(null);
    onCheckpoint(null);
  };
  const run = (o: { checkpointId?: string; resume?: unknown }) =>
    assistantId && void stream.start({ threadId, assistantId, input: null, streamModes: ["updates", "messages-tuple", "tasks"], ...o });
  return (
    <section className="split" data-testid="timeline-view">
      <aside className="list-pane">
        <p className="muted small" data-testid="history-count">{history.length}{done ? "" : "+"} checkpoints (newest first)</p>
        {error && <p className="banner error" role="alert">{error}</p>}
        <VirtualList
          items={history}
          rowHeight={44}
          height="calc(100vh - 150px)"
          testId="history-rows"
          label="Checkpoints"
          onEnd={() => !done && void load(history.at(-1) ?? null)}
          render={(s, i) => {
            const meta = s.metadata as { step?: number; source?: string } | null;
            return (
              <button className={`row-btn${i === selected ? " selected" : ""}`} onClick={() => onCheckpoint(s.checkpoint.checkpoint_id ?? null)} data-testid="checkpoint-row">
                <span className="title">#{meta?.step ?? "?"} {meta?.source ?? ""} {s.next.length ? `→ ${s.next.join(", ")}` : ""}</span>
                <span className="muted small">{s.created_at ? new Date(s.created_at).toLocaleTimeString() : ""}</span>
                {s.tasks.some((t) => t.interrupts?.length) && <span className="badge interrupted">interrupt</span>}
              </button>
            );
          }}
        />
      </aside>
      <div className="detail">
        {stream.running && <p className="banner" data-testid="timeline-running">A run is streaming on this thread…</p>}
        {state && (
          <CheckpointView
            state={state}
            previous={previous}
            nodes={nodes}
            busy={stream.running}
            onFork={fork}
            onRerun={() => run({ checkpointId: state.checkpoint.checkpoint_id ?? undefined })}
            onResume={(resume) => run({ resume })}
          />
        )}
      </div>
    </section>
  );
}
