/** Inside a run: its model calls, tool calls and subagents as a tree, from `GET /threads/{t}/runs/{r}/trace`. */
import { useEffect, useState } from "react";
import type { Client, Run } from "@langchain/langgraph-sdk";
import { type Connection, errorMessage, getJson, type SessionAuth } from "../connection.ts";
import { VirtualList } from "../VirtualList.tsx";
import { flattenTree, type Span } from "./tree.ts";
import { SpanDetail } from "./SpanDetail.tsx";

interface Props {
  conn: Connection;
  /** This server's sign-in, when the studio is signed in with the identity provider. */
  session: SessionAuth | null;
  client: Client;
  threadId: string | null;
  runId: string | null;
  onRun: (id: string) => void;
}

type Loaded = { spans: Span[] } | { missing: string } | { error: string };

export function TraceView({ conn, session, client, threadId, runId, onRun }: Props) {
  const [runs, setRuns] = useState<Run[]>([]);
  const [trace, setTrace] = useState<Loaded | null>(null);
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set());
  const [open, setOpen] = useState<Span | null>(null);
  useEffect(() => {
    if (threadId) client.runs.list(threadId, { limit: 50 }).then(setRuns, () => setRuns([]));
  }, [client, threadId]);
  useEffect(() => {
    if (!threadId || !runId) return;
    setTrace(null);
    setOpen(null);
    getJson(conn, `/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/trace`, { session }).then(({ status, body }) => {
      if (status === 404) {
        const detail = (body as { detail?: string } | null)?.detail ?? "";
        setTrace({ missing: `This server has no run traces (GET /threads/{thread_id}/runs/{run_id}/trace answered 404${detail ? `: ${detail}` : ""}).` });
      } else if (status >= 400) setTrace({ error: `Cannot read the trace: ${status} ${JSON.stringify(body)}` });
      else setTrace({ spans: (body as { spans: Span[] }).spans ?? [] });
    }, (err) => setTrace({ error: `Cannot read the trace: ${errorMessage(err)}` }));
  }, [conn, session, threadId, runId]);
  if (!threadId) return <p className="muted pane">Choose a thread in Threads first, then one of its runs.</p>;
  const rows = trace && "spans" in trace ? flattenTree(trace.spans, collapsed) : [];
  const toggle = (id: string) => setCollapsed((c) => (c.has(id) ? (c.delete(id), new Set(c)) : new Set(c.add(id))));
  return (
    <section className="split trace-split" data-testid="trace-view">
      <aside className="list-pane">
        <label className="field-inline">
          Run{" "}
          <select value={runId ?? ""} onChange={(e) => onRun(e.target.value)} data-testid="trace-run">
            <option value="" disabled>choose a run</option>
            {runs.map((r) => <option key={r.run_id} value={r.run_id}>{r.run_id.slice(0, 8)} · {r.status}</option>)}
          </select>
        </label>
        {trace && "missing" in trace && <p className="banner" role="status" data-testid="trace-missing">{trace.missing}</p>}
        {trace && "error" in trace && <p className="banner error" role="alert">{trace.error}</p>}
        <VirtualList
          items={rows}
          rowHeight={34}
          height="calc(100vh - 160px)"
          testId="trace-tree"
          label="Spans"
          render={(n) => (
            <div className="span-row" style={{ paddingLeft: 8 + n.depth * 18 }} data-testid={`span-${n.span.kind}`}>
              {n.children > 0
                ? <button className="ghost twisty" aria-label={collapsed.has(n.span.span_id) ? "Expand" : "Collapse"} onClick={() => toggle(n.span.span_id)}>{collapsed.has(n.span.span_id) ? "▸" : "▾"}</button>
                : <span className="twisty" />}
              <button className={`row-btn span-btn${open?.span_id === n.span.span_id ? " selected" : ""}`} onClick={() => setOpen(n.span)}>
                <span className={`kind ${n.span.kind}`}>{n.span.kind}</span> <span className="span-name" title={n.span.name}>{n.span.name}</span>
                <span className="muted small span-meta">{n.span.duration_ms !== null ? `${n.span.duration_ms} ms` : "…"}{n.span.usage ? ` · ${n.span.usage.total_tokens} tok` : ""}</span>
                {n.span.status === "error" && <span className="badge error">error</span>}
              </button>
            </div>
          )}
        />
      </aside>
      <div className="detail">{open ? <SpanDetail span={open} /> : <p className="muted">Choose a span to see its input and output.</p>}</div>
    </section>
  );
}
