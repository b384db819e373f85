/** The spans of `GET /threads/{thread_id}/runs/{run_id}/trace` and their tree. */
export interface Span {
  span_id: string;
  parent_id: string | null;
  kind: "run" | "model" | "tool" | "subagent" | "chain";
  name: string;
  started_at: string;
  ended_at: string | null;
  duration_ms: number | null;
  status: "ok" | "error" | "running";
  input: unknown;
  output: unknown;
  error?: unknown;
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number; cached_input_tokens?: number; reasoning_tokens?: number };
  attributes: Record<string, unknown>;
}

export interface SpanNode {
  span: Span;
  depth: number;
  children: number;
}

/** The spans in tree order (depth first, by start time), each with its depth; collapsed spans hide their subtrees. */
export function flattenTree(spans: Span[], collapsed: ReadonlySet<string>): SpanNode[] {
  const ids = new Set(spans.map((s) => s.span_id));
  const kids = new Map<string | null, Span[]>();
  for (const s of spans) {
    const parent = s.parent_id && ids.has(s.parent_id) ? s.parent_id : null;
    kids.set(parent, [...(kids.get(parent) ?? []), s]);
  }
  for (const list of kids.values()) list.sort((a, b) => a.started_at.localeCompare(b.started_at));
  const out: SpanNode[] = [];
  const walk = (parent: string | null, depth: number) => {
    for (const s of kids.get(parent) ?? []) {
      out.push({ span: s, depth, children: kids.get(s.span_id)?.length ?? 0 });
      if (!collapsed.has(s.span_id)) walk(s.span_id, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}
