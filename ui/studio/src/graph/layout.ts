/** A layered layout of a graph: each node's rank is its distance from `__start__` (back edges ignored). */
export interface GNode {
  id: string;
  name?: string;
}
export interface GEdge {
  source: string;
  target: string;
  conditional?: boolean;
}
export interface Placed {
  id: string;
  label: string;
  x: number;
  y: number;
}

export const NODE_W = 210;
export const NODE_H = 36;
const GAP_X = 30;
const GAP_Y = 56;

export function layout(nodes: GNode[], edges: GEdge[]): { placed: Placed[]; width: number; height: number } {
  const rank = new Map<string, number>();
  const start = nodes.find((n) => n.id === "__start__")?.id ?? nodes[0]?.id;
  const out = new Map<string, string[]>();
  for (const e of edges) out.set(e.source, [...(out.get(e.source) ?? []), e.target]);
  const queue: string[] = start ? [start] : [];
  if (start) rank.set(start, 0);
  while (queue.length) {
    const id = queue.shift()!;
    for (const t of out.get(id) ?? []) {
      if (!rank.has(t)) {
        rank.set(t, rank.get(id)! + 1);
        queue.push(t);
      }
    }
  }
  let maxRank = Math.max(0, ...rank.values());
  for (const n of nodes) if (!rank.has(n.id)) rank.set(n.id, n.id === "__end__" ? maxRank + 1 : ++maxRank);
  const end = nodes.find((n) => n.id === "__end__");
  if (end) rank.set(end.id, Math.max(...[...rank.entries()].filter(([k]) => k !== end.id).map(([, v]) => v)) + 1);
  const rows = new Map<number, GNode[]>();
  for (const n of nodes) rows.set(rank.get(n.id)!, [...(rows.get(rank.get(n.id)!) ?? []), n]);
  const widest = Math.max(1, ...[...rows.values()].map((r) => r.length));
  const width = widest * (NODE_W + GAP_X) + GAP_X + 90;
  const placed: Placed[] = [];
  for (const [r, row] of rows) {
    const rowW = row.length * (NODE_W + GAP_X) - GAP_X;
    row.forEach((n, i) =>
      placed.push({ id: n.id, label: n.name ?? n.id, x: (width - 90 - rowW) / 2 + i * (NODE_W + GAP_X), y: GAP_Y / 2 + r * (NODE_H + GAP_Y) })
    );
  }
  const height = (Math.max(0, ...rows.keys()) + 1) * (NODE_H + GAP_Y);
  return { placed, width, height };
}
