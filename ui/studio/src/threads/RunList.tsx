/** A thread's runs: status, duration, multitask strategy; join a running one, open its trace. */
import { useEffect, useState } from "react";
import type { Client, Run } from "@langchain/langgraph-sdk";
import { errorMessage } from "../connection.ts";

interface Props {
  client: Client;
  threadId: string;
  refreshKey: number;
  onJoin: (runId: string) => void;
  onTrace: (runId: string) => void;
}

/** A run's duration: from created to updated (or now while it runs). */
export function duration(r: Run): string {
  const end = r.status === "pending" || r.status === "running" ? Date.now() : Date.parse(r.updated_at);
  const ms = Math.max(0, end - Date.parse(r.created_at));
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function RunList({ client, threadId, refreshKey, onJoin, onTrace }: Props) {
  const [runs, setRuns] = useState<Run[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const load = () =>
      client.runs.list(threadId, { limit: 50 }).then((r) => (setRuns(r), setError(null)), (err) => setError(errorMessage(err)));
    void load();
    // Runs started elsewhere (another tab, a script) show up without a reload.
    const timer = setInterval(load, 2000);
    return () => clearInterval(timer);
  }, [client, threadId, refreshKey]);
  return (
    <div className="card">
      <h3>Runs</h3>
      {error && <p className="banner error" role="alert">{error}</p>}
      <table className="table" data-testid="run-list">
        <thead>
          <tr><th>Run</th><th>Status</th><th>Duration</th><th>Multitask</th><th /></tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.run_id} data-testid="run-row">
              <td className="mono small">{r.run_id.slice(0, 8)}</td>
              <td><span className={`badge ${r.status}`}>{r.status}</span></td>
              <td>{duration(r)}</td>
              <td>{r.multitask_strategy ?? "—"}</td>
              <td className="actions">
                {(r.status === "running" || r.status === "pending") && <button onClick={() => onJoin(r.run_id)}>Join</button>}
                <button onClick={() => onTrace(r.run_id)}>Trace</button>
              </td>
            </tr>
          ))}
          {runs.length === 0 && <tr><td colSpan={5} className="muted">No runs yet.</td></tr>}
        </tbody>
      </table>
    </div>
  );
}
