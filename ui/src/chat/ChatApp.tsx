/** The signed-in app: sidebar with threads, the conversation, the activity panel, connection state. */
import { useCallback, useEffect, useMemo, useState } from "react";
import type { AuthDriver, AuthSnapshot } from "../auth/driver.ts";
import { createApiClient } from "../api.ts";
import { Icon } from "../icons.tsx";
import type { UiSettings } from "../settings.ts";
import type { Theme } from "../theme.ts";
import { Conversation } from "./Conversation.tsx";
import { ThreadList } from "./ThreadList.tsx";
import { useThreads } from "./useThreads.ts";

function threadFromUrl(): string | null {
  return new URLSearchParams(location.search).get("thread");
}

function setThreadInUrl(id: string | null, replace = false) {
  const url = new URL(location.href);
  if (id) url.searchParams.set("thread", id);
  else url.searchParams.delete("thread");
  if (url.href === location.href) return;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
}

function useOnline(): [boolean, (v: boolean) => void] {
  const [online, setOnline] = useState(navigator.onLine);
  useEffect(() => {
    const on = () => setOnline(true);
    const off = () => setOnline(false);
    addEventListener("online", on);
    addEventListener("offline", off);
    return () => { removeEventListener("online", on); removeEventListener("offline", off); };
  }, []);
  return [online, setOnline];
}

export function ChatApp({ settings, auth, snapshot, theme, toggleTheme }: {
  settings: UiSettings;
  auth: AuthDriver;
  snapshot: AuthSnapshot;
  theme: Theme;
  toggleTheme: () => void;
}) {
  const [online, setOnline] = useOnline();
  const client = useMemo(() => createApiClient(auth, setOnline), [auth, setOnline]);
  const [threadId, setThreadId] = useState<string | null>(threadFromUrl);
  const [reloadKey, setReloadKey] = useState(0);
  const [sidebarOpen, setSidebarOpen] = useState(false);
  // The user's choice for the activity panel in this conversation; null: open when it has something to show.
  const [panelChoice, setPanelChoice] = useState<boolean | null>(null);
  const { threads, loading, error, refresh, touch } = useThreads(client, auth.browserId);

  useEffect(() => {
    const onPop = () => setThreadId(threadFromUrl());
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);

  // While offline, probe the API every few seconds; on recovery, reload the conversation.
  useEffect(() => {
    if (online) return;
    const timer = setInterval(() => void refresh(), 3000);
    return () => {
      clearInterval(timer);
      setReloadKey((k) => k + 1);
    };
  }, [online, refresh]);

  const select = useCallback((id: string | null) => {
    setThreadId(id);
    setPanelChoice(null);
    setThreadInUrl(id);
    setSidebarOpen(false);
  }, []);
  const onThreadId = useCallback((id: string) => {
    setThreadId(id);
    setThreadInUrl(id, true);
    touch(id);
    void refresh();
  }, [refresh, touch]);
  const onRunStart = useCallback((id: string | null) => {
    if (id) touch(id);
  }, [touch]);

  const who = snapshot.user?.email ?? snapshot.user?.name ?? snapshot.user?.id;
  const footer = auth.browserId ? (
    <div className="who anon" title="Anonymous mode: conversations are grouped by a cookie in this browser. This is for convenience only, not privacy: anyone with the deployment URL can call its API.">
      <Icon name="shield" />
      <span>Anonymous session. Conversations are listed for this browser only (a convenience, not security).</span>
    </div>
  ) : who ? (
    <div className="who">
      <span className="who-avatar" aria-hidden>{who.slice(0, 1).toUpperCase()}</span>
      <span className="who-name" title={who} data-testid="signed-in-as">{who}</span>
      <button type="button" className="icon-btn" onClick={() => void auth.signOut()} aria-label="Sign out" title="Sign out" data-testid="sign-out"><Icon name="logout" /></button>
    </div>
  ) : null;

  const header = (activity: boolean, panelOpen: boolean) => (
    <header className="topbar">
      <button type="button" className="icon-btn only-mobile" aria-label="Conversations" onClick={() => setSidebarOpen(true)}><Icon name="menu" /></button>
      <div className="brand">
        <span className="brand-name" data-testid="app-name">{settings.app_name}</span>
        {settings.subtitle && <span className="brand-sub">{settings.subtitle}</span>}
      </div>
      <div className="topbar-actions">
        <button type="button" className="icon-btn only-mobile" aria-label="New chat" onClick={() => select(null)}><Icon name="plus" /></button>
        <button type="button" className="icon-btn" onClick={toggleTheme} data-testid="theme-toggle"
          aria-label={theme === "dark" ? "Switch to light theme" : "Switch to dark theme"} title={theme === "dark" ? "Light theme" : "Dark theme"}>
          <Icon name={theme === "dark" ? "sun" : "moon"} />
        </button>
        <button type="button" className={`icon-btn ${panelOpen ? "on" : ""}`} onClick={() => setPanelChoice(!panelOpen)} data-testid="panel-toggle"
          aria-label={panelOpen ? "Hide activity panel" : "Show activity panel"} aria-pressed={panelOpen} title="Todos, files and subagents">
          <Icon name="panel" />{activity && !panelOpen && <span className="dot" />}
        </button>
      </div>
    </header>
  );

  return (
    <div className="app">
      {!online && (
        <div className="offline" role="status" data-testid="offline-banner"><Icon name="wifiOff" />Connection lost. Reconnecting…</div>
      )}
      <div className={`sidebar ${sidebarOpen ? "open" : ""}`}>
        <div className="sidebar-brand">
          <span className="logo" aria-hidden><Icon name="sparkle" /></span>
          <span>{settings.app_name}</span>
          <button type="button" className="icon-btn only-mobile" aria-label="Close" onClick={() => setSidebarOpen(false)}><Icon name="close" /></button>
        </div>
        <ThreadList threads={threads} activeId={threadId} loading={loading} error={error} onSelect={select} onNew={() => select(null)} footer={footer} />
      </div>
      {sidebarOpen && <div className="backdrop" onClick={() => setSidebarOpen(false)} />}
      <Conversation key={reloadKey} settings={settings} client={client} threadId={threadId} browserId={auth.browserId} online={online}
        panelChoice={panelChoice} onPanelChoice={setPanelChoice} onThreadId={onThreadId} onRunStart={onRunStart} onRunDone={() => void refresh()} header={header} />
    </div>
  );
}
