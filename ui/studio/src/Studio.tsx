/**
 * The studio's shell: sign-in to this server when its deployment has an identity provider, the
 * connection bar, the area tabs, and the state the areas share, kept in the address bar
 * (`route.ts`: area, thread, run, checkpoint).
 */
import { useMemo, useState } from "react";
import { type Connection, createClient, loadConnection, saveConnection, type SessionAuth } from "./connection.ts";
import { ConnectionBar } from "./ConnectionBar.tsx";
import { useRunStream } from "./useRunStream.ts";
import { GraphView } from "./graph/GraphView.tsx";
import { ThreadsView } from "./threads/ThreadsView.tsx";
import { TimelineView } from "./timeline/TimelineView.tsx";
import { TraceView } from "./trace/TraceView.tsx";
import { StoreView } from "./store/StoreView.tsx";
import { AssistantsView } from "./assistants/AssistantsView.tsx";
import { useAssistants } from "./useAssistants.ts";
import { type Area, AREAS, useRoute } from "./route.ts";
import { readStudioAuth, SignIn, studioDriver, useSession } from "./signIn.tsx";

export type { Area };

export function Studio() {
  const driver = useMemo(() => studioDriver(readStudioAuth()), []);
  const snapshot = useSession(driver);
  const [conn, setConn] = useState<Connection>(loadConnection);
  // This server's sign-in applies to this server only: another base URL uses the form's key or token.
  const session: SessionAuth | null = driver && !conn.url.trim() ? driver : null;
  if (session && driver && snapshot.status !== "signed_in") return <SignIn driver={driver} snapshot={snapshot} />;
  return <Shell conn={conn} setConn={setConn} session={session} user={session ? snapshot.user?.email ?? snapshot.user?.name ?? snapshot.user?.id ?? null : null} onSignOut={driver?.signOut} />;
}

interface ShellProps {
  conn: Connection;
  setConn: (c: Connection) => void;
  session: SessionAuth | null;
  user: string | null;
  onSignOut?: () => Promise<void>;
}

function Shell({ conn, setConn, session, user, onSignOut }: ShellProps) {
  const client = useMemo(() => createClient(conn, session), [conn, session]);
  const [route, navigate] = useRoute();
  const { area, thread: threadId, run: runId, checkpoint } = route;
  const assistants = useAssistants(client);
  const stream = useRunStream(client);
  const connect = (c: Connection) => {
    saveConnection(c);
    setConn(c);
    navigate({ thread: null, run: null, checkpoint: null });
  };
  const selectThread = (id: string) => navigate({ thread: id, run: null, checkpoint: null });
  const openThread = (id: string, to: Area = "Timeline") => navigate({ area: to, thread: id, run: null, checkpoint: null });
  const openRun = (tid: string, rid: string) => navigate({ area: "Trace", thread: tid, run: rid, checkpoint: null });
  return (
    <div className="studio">
      <header className="top">
        <strong className="brand">agentcli studio</strong>
        <nav className="tabs" role="tablist">
          {AREAS.map((a) => (
            <button key={a} role="tab" aria-selected={area === a} data-testid={`area-${a.toLowerCase()}`} onClick={() => navigate({ area: a })}>
              {a}
              {a === "Threads" && stream.running ? <span className="dot" aria-label="a run is streaming" /> : null}
            </button>
          ))}
        </nav>
        {user !== null && (
          <span className="who">
            <span className="muted small" data-testid="signed-in-as">{user}</span>
            <button className="ghost" data-testid="sign-out" onClick={() => void onSignOut?.()}>Sign out</button>
          </span>
        )}
        <ConnectionBar value={conn} onChange={connect} signedIn={session !== null} />
      </header>
      {assistants.error ? <p className="banner error" role="alert">{assistants.error}</p> : null}
      <main className="area" role="tabpanel" aria-label={area}>
        {area === "Graph" && <GraphView client={client} assistants={assistants} stream={stream} />}
        {area === "Threads" && (
          <ThreadsView client={client} assistants={assistants} stream={stream} threadId={threadId} onThread={selectThread} onOpen={openThread} onRun={openRun} />
        )}
        {area === "Timeline" && (
          <TimelineView
            client={client}
            assistants={assistants}
            stream={stream}
            threadId={threadId}
            checkpointId={checkpoint}
            onCheckpoint={(id) => navigate({ checkpoint: id })}
          />
        )}
        {area === "Trace" && <TraceView conn={conn} session={session} client={client} threadId={threadId} runId={runId} onRun={(id) => navigate({ run: id })} />}
        {area === "Store" && <StoreView client={client} />}
        {area === "Assistants" && <AssistantsView client={client} assistants={assistants} />}
      </main>
    </div>
  );
}
