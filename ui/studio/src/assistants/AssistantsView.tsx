/** Assistants: listed, their config and versions viewed, a new version made from an edited config. */
import { useEffect, useState } from "react";
import type { Assistant, AssistantVersion, Client } from "@langchain/langgraph-sdk";
import type { Assistants } from "../useAssistants.ts";
import { errorMessage } from "../connection.ts";
import { Json, parseJson } from "../Json.tsx";

export function AssistantsView({ client, assistants }: { client: Client; assistants: Assistants }) {
  const a = assistants.selected;
  const [versions, setVersions] = useState<AssistantVersion[]>([]);
  const [draft, setDraft] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState("");
  useEffect(() => {
    if (!a) return;
    setDraft(JSON.stringify({ config: a.config, context: a.context, metadata: a.metadata }, null, 2));
    client.assistants.getVersions(a.assistant_id, { limit: 50 }).then(setVersions, (err) => setError(errorMessage(err)));
  }, [client, a?.assistant_id, a?.version]);
  const newVersion = async () => {
    if (!a) return;
    try {
      const edited = (parseJson(draft, "The assistant") ?? {}) as Partial<Assistant>;
      await client.assistants.update(a.assistant_id, { config: edited.config, context: edited.context, metadata: edited.metadata });
      setError(null);
      await assistants.reload();
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  const create = async () => {
    try {
      const made = await client.assistants.create({ graphId: a?.graph_id ?? "agent", name: name || undefined, config: a?.config });
      await assistants.reload();
      assistants.select(made.assistant_id);
      setError(null);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <section className="split" data-testid="assistants-view">
      <aside className="list-pane">
        <ul className="plain">
          {assistants.list.map((x) => (
            <li key={x.assistant_id}>
              <button className={`row-btn${x.assistant_id === a?.assistant_id ? " selected" : ""}`} onClick={() => assistants.select(x.assistant_id)} data-testid="assistant-row">
                <span className="title">{x.name}</span> <span className="muted small">{x.graph_id} · v{x.version}</span>
              </button>
            </li>
          ))}
        </ul>
        <form className="filters" onSubmit={(e) => (e.preventDefault(), void create())}>
          <input aria-label="New assistant name" placeholder="name of a new assistant" value={name} onChange={(e) => setName(e.target.value)} />
          <button type="submit">Create from this graph</button>
        </form>
      </aside>
      <div className="detail">
        {error && <p className="banner error" role="alert">{error}</p>}
        {a && (
          <>
            <div className="card">
              <h3>{a.name} <span className="muted small mono">{a.assistant_id}</span> <span className="badge" data-testid="assistant-version">v{a.version}</span></h3>
              <Json value={{ graph_id: a.graph_id, config: a.config, context: a.context, metadata: a.metadata }} testId="assistant-config" />
              <textarea aria-label="Assistant config (JSON)" rows={8} className="mono" value={draft} onChange={(e) => setDraft(e.target.value)} />
              <button onClick={() => void newVersion()} data-testid="assistant-new-version">Save as a new version</button>
            </div>
            <div className="card">
              <h3>Versions</h3>
              <table className="table" data-testid="assistant-versions">
                <thead><tr><th>Version</th><th>Created</th><th>Config</th></tr></thead>
                <tbody>
                  {versions.map((v) => (
                    <tr key={v.version}><td>v{v.version}</td><td>{new Date(v.created_at).toLocaleString()}</td><td className="mono small">{JSON.stringify(v.config).slice(0, 120)}</td></tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </div>
    </section>
  );
}
