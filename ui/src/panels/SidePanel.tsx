/** The live panels beside the chat: todos, files (and memory), subagent activity. */
import { useState } from "react";
import type { SubagentStreamInterface } from "@langchain/langgraph-sdk/react";
import { Icon } from "../icons.tsx";
import type { FileData, Todo } from "../chat/state.ts";
import { TodosPanel } from "./TodosPanel.tsx";
import { FilesPanel } from "./FilesPanel.tsx";
import { SubagentsPanel } from "./SubagentsPanel.tsx";

type Tab = "todos" | "files" | "subagents";

export function SidePanel({ todos, files, subagents, onClose }: {
  todos: Todo[];
  files: Record<string, FileData | null>;
  subagents: SubagentStreamInterface[];
  onClose: () => void;
}) {
  const [tab, setTab] = useState<Tab>("todos");
  const fileCount = Object.values(files).filter(Boolean).length;
  const running = subagents.filter((s) => s.status === "running" || s.status === "pending").length;
  const done = todos.filter((t) => t.status === "completed").length;
  const tabs: Array<{ id: Tab; label: string; icon: string; badge: string | null }> = [
    { id: "todos", label: "Todos", icon: "list", badge: todos.length ? `${done}/${todos.length}` : null },
    { id: "files", label: "Files", icon: "file", badge: fileCount ? String(fileCount) : null },
    { id: "subagents", label: "Subagents", icon: "bot", badge: subagents.length ? String(running || subagents.length) : null },
  ];
  return (
    <aside className="panel" aria-label="Agent activity">
      <div className="panel-tabs" role="tablist">
        {tabs.map((t) => (
          <button key={t.id} type="button" role="tab" id={`tab-${t.id}`} aria-selected={tab === t.id} aria-controls={`tabpanel-${t.id}`}
            className={`panel-tab ${tab === t.id ? "active" : ""}`} onClick={() => setTab(t.id)} data-testid={`tab-${t.id}`}>
            <Icon name={t.icon} />{t.label}{t.badge && <span className={`badge ${t.id === "subagents" && running ? "live" : ""}`}>{t.badge}</span>}
          </button>
        ))}
        <button type="button" className="icon-btn panel-close" onClick={onClose} aria-label="Close panel"><Icon name="close" /></button>
      </div>
      <div className="panel-body" role="tabpanel" id={`tabpanel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === "todos" && <TodosPanel todos={todos} />}
        {tab === "files" && <FilesPanel files={files} />}
        {tab === "subagents" && <SubagentsPanel subagents={subagents} />}
      </div>
    </aside>
  );
}
