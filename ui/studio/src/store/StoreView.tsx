/** The store by namespace (the agent's `/memories/...` included): namespaces, their items, an item viewed and edited. */
import { useCallback, useEffect, useState } from "react";
import type { Client, Item } from "@langchain/langgraph-sdk";
import { errorMessage } from "../connection.ts";
import { Json, parseJson } from "../Json.tsx";
import { VirtualList } from "../VirtualList.tsx";

export function StoreView({ client }: { client: Client }) {
  const [namespaces, setNamespaces] = useState<string[][]>([]);
  const [ns, setNs] = useState<string[] | null>(null);
  const [items, setItems] = useState<Item[]>([]);
  const [item, setItem] = useState<Item | null>(null);
  const [draft, setDraft] = useState("");
  const [newNs, setNewNs] = useState("");
  const [newKey, setNewKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const loadNamespaces = useCallback(async () => {
    try {
      setNamespaces((await client.store.listNamespaces({ limit: 500 })).namespaces);
    } catch (err) {
      setError(`Cannot list the store's namespaces: ${errorMessage(err)}`);
    }
  }, [client]);
  const loadItems = useCallback(async (space: string[]) => {
    try {
      const found = await client.store.searchItems(space, { limit: 200 });
      setItems(found.items.filter((i) => i.namespace.length === space.length));
    } catch (err) {
      setError(`Cannot list the items: ${errorMessage(err)}`);
    }
  }, [client]);
  useEffect(() => void loadNamespaces(), [loadNamespaces]);
  useEffect(() => void (ns && loadItems(ns)), [ns, loadItems]);
  const open = (i: Item) => {
    setItem(i);
    setDraft(JSON.stringify(i.value, null, 2));
  };
  const save = async (space: string[], key: string, text: string) => {
    try {
      await client.store.putItem(space, key, (parseJson(text, "The value") ?? {}) as Record<string, unknown>);
      setError(null);
      await loadNamespaces();
      setNs(space);
      await loadItems(space);
      open((await client.store.getItem(space, key))!);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <section className="split" data-testid="store-view">
      <aside className="list-pane">
        <h3>Namespaces</h3>
        <VirtualList
          items={namespaces}
          rowHeight={34}
          height="40vh"
          label="Namespaces"
          render={(n) => (
            <button className={`row-btn${ns?.join("/") === n.join("/") ? " selected" : ""}`} onClick={() => setNs(n)} data-testid="namespace-row">
              <span className="mono small">{n.join(" / ")}</span>
            </button>
          )}
        />
        <form className="filters" onSubmit={(e) => (e.preventDefault(), void save(newNs.split("/").filter(Boolean), newKey, "{}"))}>
          <input aria-label="New item namespace" placeholder="namespace, e.g. memories/ada" value={newNs} onChange={(e) => setNewNs(e.target.value)} />
          <input aria-label="New item key" placeholder="key" value={newKey} onChange={(e) => setNewKey(e.target.value)} />
          <button type="submit" disabled={!newNs || !newKey}>Add item</button>
        </form>
      </aside>
      <div className="detail">
        {error && <p className="banner error" role="alert">{error}</p>}
        {ns && (
          <div className="card">
            <h3>Items in {ns.join(" / ")}</h3>
            <ul className="plain" data-testid="item-list">
              {items.map((i) => (
                <li key={i.key}>
                  <button className="row-btn" onClick={() => open(i)} data-testid="item-row">
                    <span className="mono">{i.key}</span> <span className="muted small">{new Date(i.updatedAt).toLocaleString()}</span>
                  </button>
                </li>
              ))}
            </ul>
          </div>
        )}
        {item && (
          <div className="card" data-testid="item-detail">
            <h3>{item.namespace.join(" / ")} · {item.key}</h3>
            <Json value={item.value} testId="item-value" />
            <textarea aria-label="Item value (JSON)" rows={8} className="mono" value={draft} onChange={(e) => setDraft(e.target.value)} />
            <button onClick={() => void save(item.namespace, item.key, draft)} data-testid="item-save">Save</button>
          </div>
        )}
      </div>
    </section>
  );
}
