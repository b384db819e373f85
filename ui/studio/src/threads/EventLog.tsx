/** The live events of the streaming run, virtualised (thousands of tokens stay fast); one opens in full. */
import { useState } from "react";
import type { RunStream, StreamEvent } from "../useRunStream.ts";
import { Json } from "../Json.tsx";
import { VirtualList } from "../VirtualList.tsx";

function preview(e: StreamEvent): string {
  const text = JSON.stringify(e.data) ?? "";
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

export function EventLog({ stream }: { stream: RunStream }) {
  const [open, setOpen] = useState<StreamEvent | null>(null);
  return (
    <div className="card" data-testid="event-log">
      <h3>
        Events <span className="muted small" data-testid="event-count">{stream.events.length} events</span>
        {stream.running && <span className="badge running">streaming</span>}
        {stream.running && <button onClick={() => void stream.cancel()} data-testid="run-cancel">Cancel</button>}
      </h3>
      {stream.error && <p className="banner error" role="alert">{stream.error}</p>}
      <VirtualList
        items={stream.events}
        rowHeight={26}
        height={260}
        follow={stream.running}
        testId="event-rows"
        label="Events"
        render={(e) => (
          <button className="event-row" onClick={() => setOpen(e)}>
            <span className="mono small seq">{e.seq}</span>
            <span className="ev">{e.event}</span>
            <span className="mono small muted">{preview(e)}</span>
          </button>
        )}
      />
      {open && (
        <div className="event-detail">
          <button className="ghost" onClick={() => setOpen(null)}>Close</button>
          <Json value={open.data} />
        </div>
      )}
    </div>
  );
}
