/** The studio's shell: the connection bar, the area tabs, and the state the areas share. */
import { useMemo, useState } from "react";
import { type Connection, createClient, loadConnection, saveConnection } from "./connection.ts";
import { ConnectionBar } from "./ConnectionBar.tsx";
import { useRunStream } from "./useRunStream.ts";
import { GraphView } from "./graph/GraphView.tsx";
import { ThreadsView } from "./threads/ThreadsView.tsx";
import { TimelineView } from "./timeline/TimelineView.tsx";
import { TraceView } from "./trace/TraceView.tsx";
import { StoreView } from "./store/StoreView.tsx";
import { AssistantsView } from "./assistants/AssistantsView.tsx";
import { useAssistants } from "./useAssistants.ts";

const AREAS = ["Graph", "Threads", "Timeline", "Trace", "Store", "Assistants"] as const;
export type Area = (typeof AREAS)[number];

export function Studio() {
  const [conn, setConn] = useState<Connection>(loadConnection);
  const client = useMemo(() => createClient(conn), [conn]);
  const [area, setArea] = useState<Area>("Graph");
  const [threadId, setThreadId] = useState<string | null>(null);
  const [runId, setRunId] = useState<string | null>(null);
  const assistants = useAssistants(client);
  const stream = useRunStream(client);
  const connect = (c: Connection) => {
    saveConnection(c);
    setConn(c);
    setThreadId(null);
    setRunId(null);
  };
  const openThread = (id: string, to: Area = "Timeline") => {
    setThreadId(id);
    setArea(to);
  };
  const openRun = (tid: string, rid: string) => {
    setThreadId(tid);
    setRunId(rid);
    setArea("Trace");
  };
  return (
    <div className="studio">
      <header className="top">
        <strong className="brand">agentcli studio</strong>
        <nav className="tabs" role="tablist">
          {AREAS.map((a) => (
            <button key={a} role="tab" aria-selected={area === a} data-testid={`area-${a.toLowerCase()}`} onClick={() => setArea(a)}>
              {a}
              {a === "Threads" && stream.running ? <span className="dot" aria-label="a run is streaming" /> : null}
            </button>
          ))}
        </nav>
        <ConnectionBar value={conn} onChange={connect} />
      </header>
      {assistants.error ? <p className="banner error" role="alert">{assistants.error}</p> : null}
      <main className="area" role="tabpanel" aria-label={area}>
        {area === "Graph" && <GraphView client={client} assistants={assistants} stream={stream} />}
        {area === "Threads" && (
          <ThreadsView client={client} assistants={assistants} stream={stream} threadId={threadId} onThread={setThreadId} onOpen={openThread} onRun={openRun} />
        )}
        {area === "Timeline" && <TimelineView client={client} assistants={assistants} stream={stream} threadId={threadId} />}
        {area === "Trace" && <TraceView conn={conn} client={client} threadId={threadId} runId={runId} onRun={setRunId} />}
        {area === "Store" && <StoreView client={client} />}
        {area === "Assistants" && <AssistantsView client={client} assistants={assistants} />}
      </main>
    </div>
  );
}
