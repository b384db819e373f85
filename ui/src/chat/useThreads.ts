/** The thread picker's data: the caller's threads, newest first (by `metadata.browser_id` for anonymous users). */
import { useCallback, useEffect, useState } from "react";
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

export function useThreads(client: Client, browserId: string | null) {
  const [threads, setThreads] = useState<ThreadSummary[]>([]);
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
  return { threads, loading, error, refresh };
}
