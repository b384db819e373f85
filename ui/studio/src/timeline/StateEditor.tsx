/** Edits a checkpoint's values and forks from it (`updateState` with `as_node`): a new branch of the thread. */
import { useState } from "react";
import { parseJson } from "../Json.tsx";

interface Props {
  values: unknown;
  nodes: string[];
  busy: boolean;
  onFork: (values: unknown, asNode: string | undefined) => Promise<void>;
}

export function StateEditor({ values, nodes, busy, onFork }: Props) {
  const [text, setText] = useState(() => JSON.stringify(values, null, 2));
  const [asNode, setAsNode] = useState("");
  const [error, setError] = useState<string | null>(null);
  const fork = async () => {
    try {
      await onFork(parseJson(text, "The state") ?? {}, asNode || undefined);
      setError(null);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div className="card" data-testid="state-editor">
      <h3>Edit and fork</h3>
      <textarea aria-label="State values (JSON)" rows={10} value={text} onChange={(e) => setText(e.target.value)} className="mono" />
      <label className="field-inline">
        As node{" "}
        <select aria-label="As node" value={asNode} onChange={(e) => setAsNode(e.target.value)}>
          <option value="">(automatic)</option>
          {nodes.map((n) => <option key={n}>{n}</option>)}
        </select>
      </label>
      <button disabled={busy} onClick={() => void fork()} data-testid="fork">Fork from this checkpoint</button>
      {error && <p className="banner error" role="alert">{error}</p>}
    </div>
  );
}
