/** The sidebar: new chat, the thread picker, and who is signed in. */
import type { ReactNode } from "react";
import { Icon } from "../icons.tsx";
import type { ThreadSummary } from "./useThreads.ts";

function when(iso: string): string {
  const d = new Date(iso);
  const diff = (Date.now() - d.getTime()) / 1000;
  if (!Number.isFinite(diff)) return "";
  if (diff < 60) return "just now";
  if (diff < 3600) return `${Math.floor(diff / 60)} min ago`;
  if (diff < 86400) return `${Math.floor(diff / 3600)} h ago`;
  return d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
}

export function ThreadList({ threads, activeId, loading, error, onSelect, onNew, footer }: {
  threads: ThreadSummary[];
  activeId: string | null;
  loading: boolean;
  error: string | null;
  onSelect: (id: string) => void;
  onNew: () => void;
  footer: ReactNode;
}) {
  return (
    <nav className="sidebar-inner" aria-label="Conversations">
      <button type="button" className="btn btn-new" onClick={onNew} data-testid="new-chat"><Icon name="plus" />New chat</button>
      <div className="thread-heading">Recent</div>
      <ul className="threads" data-testid="thread-list">
        {loading && !threads.length && <li className="threads-note"><span className="skeleton" /><span className="skeleton short" /></li>}
        {error && <li className="threads-note error">Cannot load conversations: {error}</li>}
        {!loading && !error && !threads.length && <li className="threads-note">No conversations yet.</li>}
        {threads.map((t) => (
          <li key={t.id}>
            <button type="button" className={`thread ${t.id === activeId ? "active" : ""}`} aria-current={t.id === activeId ? "page" : undefined}
              onClick={() => onSelect(t.id)} title={t.title}>
              <span className="thread-title">{t.title}</span>
              <span className="thread-meta">{t.status === "interrupted" ? <span className="pill pill-warn">Needs approval</span> : when(t.updatedAt)}</span>
            </button>
          </li>
        ))}
      </ul>
      <div className="sidebar-footer">{footer}</div>
    </nav>
  );
}
