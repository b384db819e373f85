/**
 * The thread picker's data: the caller's threads (by `metadata.browser_id` for anonymous users)
 * in order of last activity: a thread whose run is busy first (it is active now), then the
 * latest of the server's `updated_at` and when this browser last sent a message in it. While a
 * run is busy the list is refreshed every few seconds, so statuses and order stay current.
 */
import { useCallback, useEffect, useMemo, useState } from "react";
import type { Client, Thread } from "@langchain/langgraph-sdk";
import { messageText, titleFrom } from "./state.ts";

export interface ThreadSummary {
  id: string;
  title: string;
  updatedAt: string;
  status: string;
}

function summarize(t: Thread): ThreadSummary {
  const meta = (t.metadata ?? {}) as Record<string, unknown>;
  let title = typeof meta.title === "string" && meta.title ? meta.title : "";
  if (!title) {
    const messages = ((t.values ?? {}) as { messages?: Array<{ type?: string; content?: unknown }> }).messages ?? [];
    const first = messages.find((m) => m.type === "human");
    title = first ? titleFrom(messageText(first.content)) : "New chat";
  }
  return { id: t.thread_id, title, updatedAt: t.updated_at, status: t.status };
}

const ACTIVITY_KEY = "agentcli.activity";
const BUSY_POLL_MS = 4000;

function readActivity(): Record<string, number> {
  try {
    const v = JSON.parse(localStorage.getItem(ACTIVITY_KEY) ?? "{}") as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, number>) : {};
  } catch {
    return {};
  }
}

/** `threads` in order of last activity (see above); ties keep the server's order. */
export function byActivity(threads: ThreadSummary[], sentAt: Record<string, number>): ThreadSummary[] {
  const key = (t: ThreadSummary) => Math.max(Date.parse(t.updatedAt) || 0, sentAt[t.id] ?? 0);
  return threads
    .map((t, i) => ({ t, i, busy: t.status === "busy" ? 1 : 0, at: key(t) }))
    .sort((a, b) => b.busy - a.busy || b.at - a.at || a.i - b.i)
    .map((x) => x.t);
}

export function useThreads(client: Client, browserId: string | null) {
  const [threads, setThreads] = useState<ThreadSummary[]>([]);
  const [sentAt, setSentAt] = useState<Record<string, number>>(readActivity);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const refresh = useCallback(async () => {
    try {
      const list = await client.threads.search({
        metadata: browserId ? { browser_id: browserId } : undefined,
        limit: 50,
        sortBy: "updated_at",
        sortOrder: "desc",
      });
      setThreads(list.map(summarize));
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setLoading(false);
    }
  }, [client, browserId]);
  useEffect(() => { void refresh(); }, [refresh]);
  const anyBusy = threads.some((t) => t.status === "busy");
  useEffect(() => {
    if (!anyBusy) return;
    const timer = setInterval(() => void refresh(), BUSY_POLL_MS);
    return () => clearInterval(timer);
  }, [anyBusy, refresh]);
  /** Records that the user just sent a message in thread `id`. */
  const touch = useCallback((id: string) => {
    setSentAt((prev) => {
      // Only the most recent threads matter for the order: keep the map small.
      const next = Object.fromEntries(Object.entries({ ...prev, [id]: Date.now() }).sort((a, b) => b[1] - a[1]).slice(0, 100));
      try {
        localStorage.setItem(ACTIVITY_KEY, JSON.stringify(next));
      } catch { /* storage full or disabled: the order still holds for this page */ }
      return next;
    });
  }, []);
  const ordered = useMemo(() => byActivity(threads, sentAt), [threads, sentAt]);
  return { threads: ordered, loading, error, refresh, touch };
}
