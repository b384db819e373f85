/**
 * A list that renders only the rows in view (fixed row height), so a thread of thousands of
 * checkpoints or a run of thousands of events scrolls as fast as a short one.
 */
import { type ReactNode, useEffect, useRef, useState } from "react";

export interface VirtualListProps<T> {
  items: T[];
  rowHeight: number;
  height: number | string;
  render: (item: T, index: number) => ReactNode;
  /** Called when the last rows come into view (load the next page). */
  onEnd?: () => void;
  /** Keep the view at the bottom while new items arrive (a live event log). */
  follow?: boolean;
  testId?: string;
  label?: string;
}

export function VirtualList<T>(p: VirtualListProps<T>) {
  const ref = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [view, setView] = useState(600);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setView(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useEffect(() => {
    const el = ref.current;
    if (p.follow && el) el.scrollTop = el.scrollHeight;
  }, [p.follow, p.items.length]);
  const first = Math.max(0, Math.floor(top / p.rowHeight) - 5);
  const last = Math.min(p.items.length, Math.ceil((top + view) / p.rowHeight) + 5);
  useEffect(() => {
    if (p.onEnd && last >= p.items.length - 1 && p.items.length > 0) p.onEnd();
  }, [last, p.items.length]);
  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <div key={i} className="vrow" style={{ top: i * p.rowHeight, height: p.rowHeight }}>
        {p.render(p.items[i]!, i)}
      </div>,
    );
  }
  return (
    <div ref={ref} className="vlist" style={{ height: p.height }} onScroll={(e) => setTop(e.currentTarget.scrollTop)} data-testid={p.testId} aria-label={p.label} role="list">
      <div style={{ height: p.items.length * p.rowHeight, position: "relative" }}>{rows}</div>
    </div>
  );
}
