/** Threads newest first, titled from their first message, searchable by status and metadata; paginated and virtualised. */
import { useCallback, useEffect, useState } from "react";
import type { Client, Thread, ThreadStatus } from "@langchain/langgraph-sdk";
import { errorMessage } from "../connection.ts";
import { parseJson } from "../Json.tsx";
import { VirtualList } from "../VirtualList.tsx";

const PAGE = 50;

/** A thread's title: the text of its first message, else its id. */
export function threadTitle(t: Thread): string {
  const messages = (t.values as { messages?: Array<{ content?: unknown }> } | null)?.messages;
  const c = messages?.[0]?.content;
  const text = typeof c === "string" ? c : Array.isArray(c) ? c.map((b) => (b as { text?: string }).text ?? "").join(" ") : "";
  return text.trim() || t.thread_id;
}

interface Props {
  client: Client;
  selected: string | null;
  onSelect: (id: string) => void;
  refreshKey: number;
}

export function ThreadList({ client, selected, onSelect, refreshKey }: Props) {
  const [status, setStatus] = useState<"" | ThreadStatus>("");
  const [metadata, setMetadata] = useState("");
  const [threads, setThreads] = useState<Thread[]>([]);
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async (offset: number) => {
    try {
      const page = await client.threads.search({
        limit: PAGE,
        offset,
        status: status || undefined,
        metadata: parseJson(metadata, "Metadata") as Record<string, unknown> | undefined,
        sortBy: "created_at",
        sortOrder: "desc",
      });
      setThreads((prev) => (offset === 0 ? page : prev.concat(page)));
      setDone(page.length < PAGE);
      setError(null);
    } catch (err) {
      setError(errorMessage(err));
    }
  }, [client, status, metadata]);
  useEffect(() => {
    void load(0);
  }, [client, status, refreshKey]);
  return (
    <aside className="list-pane" data-testid="thread-list">
      <form className="filters" onSubmit={(e) => (e.preventDefault(), void load(0))}>
        <select aria-label="Status" value={status} onChange={(e) => setStatus(e.target.value as ThreadStatus)} data-testid="thread-status">
          <option value="">Any status</option>
          {["idle", "busy", "interrupted", "error"].map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
        <input aria-label="Metadata (JSON)" placeholder='metadata, e.g. {"user": "ada"}' value={metadata} onChange={(e) => setMetadata(e.target.value)} data-testid="thread-metadata" />
        <button type="submit">Search</button>
      </form>
      {error && <p className="banner error" role="alert">{error}</p>}
      <VirtualList
        items={threads}
        rowHeight={52}
        height="calc(100vh - 170px)"
        label="Threads"
        onEnd={() => !done && void load(threads.length)}
        render={(t) => (
          <button className={`row-btn${t.thread_id === selected ? " selected" : ""}`} onClick={() => onSelect(t.thread_id)} data-testid="thread-row">
            <span className="title">{threadTitle(t)}</span>
            <span className={`badge ${t.status}`}>{t.status}</span>
            <span className="muted small">{new Date(t.created_at).toLocaleString()}</span>
          </button>
        )}
      />
    </aside>
  );
}
