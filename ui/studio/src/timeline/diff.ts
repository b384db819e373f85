/** What changed between two states' values, channel by channel. */
export interface ChannelDiff {
  channel: string;
  kind: "added" | "removed" | "changed";
  before?: unknown;
  after?: unknown;
}

export function diffValues(prev: Record<string, unknown> | null, next: Record<string, unknown>): ChannelDiff[] {
  const out: ChannelDiff[] = [];
  const keys = new Set([...Object.keys(prev ?? {}), ...Object.keys(next)]);
  for (const k of [...keys].sort()) {
    const a = prev?.[k], b = next[k];
    if (a === undefined && b !== undefined) out.push({ channel: k, kind: "added", after: b });
    else if (a !== undefined && b === undefined) out.push({ channel: k, kind: "removed", before: a });
    else if (JSON.stringify(a) !== JSON.stringify(b)) {
      // Message lists grow: show only the new messages.
      if (Array.isArray(a) && Array.isArray(b) && b.length > a.length && JSON.stringify(b.slice(0, a.length)) === JSON.stringify(a)) {
        out.push({ channel: k, kind: "changed", after: b.slice(a.length) });
      } else out.push({ channel: k, kind: "changed", before: a, after: b });
    }
  }
  return out;
}
