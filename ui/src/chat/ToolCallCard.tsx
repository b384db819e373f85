/** A tool call as a collapsible card: name, a one-line summary of its arguments, its state and result. */
import { useState } from "react";
import { Icon } from "../icons.tsx";
import { messageText } from "./state.ts";

export interface ToolCallView {
  id: string;
  name: string;
  args: Record<string, unknown>;
  state: "pending" | "completed" | "error";
  result?: unknown;
}

function summary(name: string, args: Record<string, unknown>): string {
  if (name === "write_todos" && Array.isArray(args.todos)) return `${args.todos.length} item${args.todos.length === 1 ? "" : "s"} in the plan`;
  const path = args.file_path ?? args.path;
  if (typeof path === "string") return path;
  const first = Object.values(args).find((v) => typeof v === "string") as string | undefined;
  const text = first ?? JSON.stringify(args);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

export function ToolCallCard({ call }: { call: ToolCallView }) {
  const [open, setOpen] = useState(false);
  const result = call.result === undefined ? null : messageText((call.result as { content?: unknown })?.content ?? call.result);
  return (
    <div className={`tool-card state-${call.state}`} data-testid="tool-card">
      <button type="button" className="tool-card-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span className={`status-dot ${call.state}`} aria-label={call.state} />
        <span className="tool-name">{call.name}</span>
        <span className="tool-summary">{summary(call.name, call.args)}</span>
        <Icon name="chevron" className={`chev ${open ? "open" : ""}`} />
      </button>
      {open && (
        <div className="tool-card-body">
          <div className="label">Arguments</div>
          <pre>{JSON.stringify(call.args, null, 2)}</pre>
          {result !== null && <>
            <div className="label">Result</div>
            <pre>{result || "(empty)"}</pre>
          </>}
        </div>
      )}
    </div>
  );
}
