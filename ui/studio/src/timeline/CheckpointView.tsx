/** One checkpoint: its messages, its other channels as JSON, the diff from the previous one, and its actions. */
import type { ThreadState } from "@langchain/langgraph-sdk";
import { Json } from "../Json.tsx";
import { Messages } from "./Messages.tsx";
import { diffValues } from "./diff.ts";
import { Interrupts } from "./Interrupts.tsx";
import { StateEditor } from "./StateEditor.tsx";

interface Props {
  state: ThreadState;
  previous: ThreadState | null;
  nodes: string[];
  busy: boolean;
  onFork: (values: unknown, asNode: string | undefined) => Promise<void>;
  onRerun: () => void;
  onResume: (value: unknown) => void;
}

export function CheckpointView({ state, previous, nodes, busy, onFork, onRerun, onResume }: Props) {
  const values = (state.values ?? {}) as Record<string, unknown>;
  const { messages, ...channels } = values;
  const diff = diffValues((previous?.values ?? null) as Record<string, unknown> | null, values);
  const interrupts = state.tasks.flatMap((t) => t.interrupts ?? []);
  const meta = state.metadata as { step?: number; source?: string; writes?: Record<string, unknown> } | null;
  return (
    <div className="checkpoint" data-testid="checkpoint-view">
      <div className="toolbar">
        <span className="mono small" data-testid="checkpoint-id">{state.checkpoint.checkpoint_id}</span>
        <span className="muted small">step {meta?.step ?? "?"} · {meta?.source ?? ""} · next: {state.next.join(", ") || "—"}</span>
        <button disabled={busy} onClick={onRerun} data-testid="rerun">Rerun from here</button>
      </div>
      {interrupts.length > 0 && <Interrupts interrupts={interrupts} busy={busy} onResume={onResume} />}
      <div className="cols">
        <div className="card">
          <h3>Messages</h3>
          {Array.isArray(messages) ? <Messages messages={messages} /> : <p className="muted">No messages channel.</p>}
          <h3>Other channels</h3>
          <Json value={channels} testId="state-channels" />
        </div>
        <div className="card" data-testid="state-diff">
          <h3>Changes from the previous checkpoint</h3>
          {diff.length === 0 && <p className="muted">No change.</p>}
          {diff.map((d) => (
            <div key={d.channel} className={`diff ${d.kind}`}>
              <strong>{d.channel}</strong> <span className="badge">{d.kind}</span>
              {d.before !== undefined && <Json value={d.before} />}
              {d.after !== undefined && <Json value={d.after} />}
            </div>
          ))}
        </div>
      </div>
      <StateEditor key={state.checkpoint.checkpoint_id} values={values} nodes={nodes} busy={busy} onFork={onFork} />
    </div>
  );
}
