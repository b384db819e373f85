/** The server's assistants and the one the studio works with. */
import { useCallback, useEffect, useState } from "react";
import type { Assistant, Client } from "@langchain/langgraph-sdk";
import { errorMessage } from "./connection.ts";

export interface Assistants {
  list: Assistant[];
  selected: Assistant | null;
  select(id: string): void;
  reload(): Promise<void>;
  error: string | null;
}

export function useAssistants(client: Client): Assistants {
  const [list, setList] = useState<Assistant[]>([]);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      const found = await client.assistants.search({ limit: 100 });
      setList(found);
      setError(null);
      setSelectedId((id) => (id && found.some((a) => a.assistant_id === id) ? id : found[0]?.assistant_id ?? null));
    } catch (err) {
      setError(`Cannot list the assistants: ${errorMessage(err)}. Check the connection (base URL, key or token).`);
    }
  }, [client]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { list, selected: list.find((a) => a.assistant_id === selectedId) ?? null, select: setSelectedId, reload, error };
}
