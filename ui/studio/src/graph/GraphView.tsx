/** The assistant's graph from `/assistants/{id}/graph`, subgraphs expandable (`?xray`), the running node highlighted. */
import { useEffect, useState } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import type { Assistants } from "../useAssistants.ts";
import type { RunStream } from "../useRunStream.ts";
import { errorMessage } from "../connection.ts";
import { AssistantPicker } from "../assistants/AssistantPicker.tsx";
import { type GEdge, type GNode, layout, NODE_H, NODE_W } from "./layout.ts";

interface Props {
  client: Client;
  assistants: Assistants;
  stream: RunStream;
}

/** True when graph node `id` (xray ids are `parent:child`) is the node `current` names. */
export function isCurrent(id: string, current: string | null): boolean {
  if (!current) return false;
  return id === current || id.endsWith(`:${current}`) || id.split(":")[0] === current;
}

export function GraphView({ client, assistants, stream }: Props) {
  const [xray, setXray] = useState(false);
  const [graph, setGraph] = useState<{ nodes: GNode[]; edges: GEdge[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = assistants.selected?.assistant_id;
  useEffect(() => {
    if (!id) return;
    let live = true;
    client.assistants.getGraph(id, { xray }).then(
      (g) => live && (setGraph(g as unknown as { nodes: GNode[]; edges: GEdge[] }), setError(null)),
      (err) => live && setError(`Cannot read the graph: ${errorMessage(err)}`),
    );
    return () => {
      live = false;
    };
  }, [client, id, xray]);
  const drawn = graph ? layout(graph.nodes, graph.edges) : null;
  const at = new Map(drawn?.placed.map((p) => [p.id, p]) ?? []);
  return (
    <section className="pane" data-testid="graph-view">
      <div className="toolbar">
        <AssistantPicker assistants={assistants} />
        <label className="check">
          <input type="checkbox" checked={xray} onChange={(e) => setXray(e.target.checked)} data-testid="graph-xray" /> Expand subgraphs
        </label>
        <span className="muted" data-testid="graph-current">
          {stream.running ? `Running: ${stream.currentNode ?? "starting"}` : "No run streaming"}
        </span>
      </div>
      {error && <p className="banner error" role="alert">{error}</p>}
      {drawn && (
        <div className="graph-wrap">
          <svg width={drawn.width} height={drawn.height} data-testid="graph-svg" role="img" aria-label="The assistant's graph">
            <defs>
              <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                <path d="M 0 0 L 10 5 L 0 10 z" className="edge-head" />
              </marker>
            </defs>
            {graph!.edges.map((e, i) => {
              const a = at.get(e.source), b = at.get(e.target);
              if (!a || !b) return null;
              const x1 = a.x + NODE_W / 2, y1 = a.y + NODE_H, x2 = b.x + NODE_W / 2, y2 = b.y;
              const back = y2 <= y1;
              const d = back
                ? `M ${a.x + NODE_W} ${a.y + NODE_H / 2} C ${a.x + NODE_W + 60} ${a.y}, ${b.x + NODE_W + 60} ${b.y + NODE_H}, ${b.x + NODE_W} ${b.y + NODE_H / 2}`
                : `M ${x1} ${y1} C ${x1} ${(y1 + y2) / 2}, ${x2} ${(y1 + y2) / 2}, ${x2} ${y2}`;
              return <path key={i} d={d} className={e.conditional ? "edge conditional" : "edge"} markerEnd="url(#arrow)" />;
            })}
            {drawn.placed.map((p) => (
              <g key={p.id} transform={`translate(${p.x},${p.y})`} data-testid={`graph-node-${p.id}`} data-current={isCurrent(p.id, stream.running ? stream.currentNode : null)} className="gnode">
                <title>{p.id}</title>
                <rect width={NODE_W} height={NODE_H} rx={p.id.startsWith("__") ? 18 : 8} />
                <text x={NODE_W / 2} y={NODE_H / 2 + 4} textAnchor="middle">{p.label.length > 28 ? `${p.label.slice(0, 27)}…` : p.label}</text>
              </g>
            ))}
          </svg>
        </div>
      )}
    </section>
  );
}
