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

/** What an `execute` result says: its output without the markers, the exit code, a timeout, a cut. */
export function parseExecuteResult(text: string): { output: string; exitCode: number | null; timedOut: boolean; truncated: boolean } {
  const exit = /\[Command (?:succeeded|failed) with exit code (-?\d+)\]/.exec(text);
  const timedOut = /\[Command timed out after /.test(text);
  const truncated = /\[Output truncated: /.test(text);
  const output = text.split("\n").filter((l) => !/^\[(Command (succeeded|failed) with exit code|Command timed out after|Command ended without|Output truncated: )/.test(l)).join("\n").replace(/\n+$/, "");
  return { output, exitCode: exit ? Number(exit[1]) : null, timedOut, truncated };
}

const COLLAPSED_LINES = 20;

/** `execute`: the command, its exit code in the header, its output (the first lines when long). */
function ExecuteCard({ call }: { call: ToolCallView }) {
  const [open, setOpen] = useState(false);
  const [all, setAll] = useState(false);
  const command = typeof call.args.command === "string" ? call.args.command : JSON.stringify(call.args);
  const text = call.result === undefined ? null : messageText((call.result as { content?: unknown })?.content ?? call.result);
  const parsed = text === null || call.state === "error" ? null : parseExecuteResult(text);
  const lines = parsed ? parsed.output.split("\n") : [];
  const long = lines.length > COLLAPSED_LINES;
  const badge = call.state === "pending" ? "running" : call.state === "error" ? "error" : parsed?.timedOut ? "timed out" : parsed?.exitCode === null || parsed === null ? "done" : `exit ${parsed.exitCode}`;
  const ok = call.state === "completed" && parsed?.exitCode === 0;
  return (
    <div className={`tool-card exec-card state-${call.state}`} data-testid="tool-card" data-tool="execute">
      <button type="button" className="tool-card-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span className={`status-dot ${call.state}`} aria-label={call.state} />
        <span className="tool-name">execute</span>
        <code className="tool-summary exec-command">$ {command.length > 80 ? `${command.slice(0, 77)}…` : command}</code>
        <span className={`exec-exit ${ok ? "ok" : call.state === "pending" ? "" : "bad"}`} data-testid="exec-exit">{badge}</span>
        <Icon name="chevron" className={`chev ${open ? "open" : ""}`} />
      </button>
      {open && (
        <div className="tool-card-body">
          <div className="label">Command</div>
          <pre data-testid="exec-command">{command}{typeof call.args.timeout === "number" ? `\n# timeout ${call.args.timeout} s` : ""}</pre>
          {text !== null && <>
            <div className="label">Output{parsed?.truncated ? " (cut by the sandbox)" : ""}</div>
            <pre data-testid="exec-output">{parsed ? ((long && !all ? lines.slice(0, COLLAPSED_LINES).join("\n") : parsed.output) || "(no output)") : text}</pre>
            {long && <button type="button" className="btn btn-ghost exec-more" onClick={() => setAll(!all)}>{all ? "Show less" : `Show all ${lines.length} lines`}</button>}
          </>}
        </div>
      )}
    </div>
  );
}

export function ToolCallCard({ call }: { call: ToolCallView }) {
  if (call.name === "execute") return <ExecuteCard call={call} />;
  return <GenericToolCallCard call={call} />;
}

function GenericToolCallCard({ call }: { call: ToolCallView }) {
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
