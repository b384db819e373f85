/** A pending human-in-the-loop approval: approve, edit the arguments as JSON, or reject with a reason. */
import { useEffect, useRef, useState } from "react";
import type { ActionRequest, Decision } from "./hitl.ts";
import { Icon } from "../icons.tsx";

type Mode = "view" | "edit" | "reject";

function ActionReview({ action, index, total, onDecide, busy }: {
  action: ActionRequest;
  index: number;
  total: number;
  onDecide: (d: Decision) => void;
  busy: boolean;
}) {
  const [mode, setMode] = useState<Mode>("view");
  const [json, setJson] = useState(() => JSON.stringify(action.args, null, 2));
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const firstButton = useRef<HTMLButtonElement>(null);
  const editor = useRef<HTMLTextAreaElement>(null);
  const reasonInput = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    if (index === 0) firstButton.current?.focus();
  }, [index]);
  useEffect(() => {
    if (mode === "edit") editor.current?.focus();
    if (mode === "reject") reasonInput.current?.focus();
  }, [mode]);

  const saveEdit = () => {
    try {
      const args = JSON.parse(json) as unknown;
      if (!args || typeof args !== "object" || Array.isArray(args)) throw new Error("The arguments must be a JSON object.");
      onDecide({ type: "edit", edited_action: { name: action.name, args: args as Record<string, unknown> } });
    } catch (err) {
      setJsonError(err instanceof SyntaxError ? `Invalid JSON: ${err.message}` : (err as Error).message);
    }
  };
  const can = (d: string) => action.allowed.includes(d as never);

  return (
    <div className="approval-action">
      <div className="approval-action-head">
        <span className="tool-name"><Icon name="tool" />{action.name}</span>
        {total > 1 && <span className="muted small">Action {index + 1} of {total}</span>}
      </div>
      {action.description && <p className="approval-desc">{action.description}</p>}
      {mode !== "edit" && action.name === "execute" && typeof action.args.command === "string"
        ? <pre className="approval-args approval-command" data-testid="approval-command">$ {action.args.command}{typeof action.args.timeout === "number" ? `\n# timeout ${action.args.timeout} s` : ""}</pre>
        : mode !== "edit" && <pre className="approval-args">{JSON.stringify(action.args, null, 2)}</pre>}
      {mode === "edit" && (
        <div className="field">
          <label htmlFor={`edit-${index}`}>Arguments (JSON)</label>
          <textarea id={`edit-${index}`} ref={editor} className="code-input" spellCheck={false} rows={Math.min(14, json.split("\n").length + 1)}
            value={json} onChange={(e) => { setJson(e.target.value); setJsonError(null); }}
            onKeyDown={(e) => { if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) saveEdit(); if (e.key === "Escape") setMode("view"); }} />
          {jsonError && <p className="field-error" role="alert">{jsonError}</p>}
        </div>
      )}
      {mode === "reject" && (
        <div className="field">
          <label htmlFor={`reason-${index}`}>Reason (sent to the agent)</label>
          <textarea id={`reason-${index}`} ref={reasonInput} rows={2} value={reason} placeholder="Why should the agent not do this?"
            onChange={(e) => setReason(e.target.value)}
            onKeyDown={(e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); onDecide({ type: "reject", message: reason.trim() || undefined }); } if (e.key === "Escape") setMode("view"); }} />
        </div>
      )}
      <div className="approval-buttons">
        {mode === "view" && <>
          {can("approve") && <button ref={firstButton} type="button" className="btn btn-primary" disabled={busy} onClick={() => onDecide({ type: "approve" })}><Icon name="check" />Approve</button>}
          {can("edit") && <button type="button" className="btn" disabled={busy} onClick={() => setMode("edit")}>Edit</button>}
          {can("reject") && <button type="button" className="btn btn-danger-ghost" disabled={busy} onClick={() => setMode("reject")}>Reject</button>}
        </>}
        {mode === "edit" && <>
          <button type="button" className="btn btn-primary" disabled={busy} onClick={saveEdit}>Save and approve</button>
          <button type="button" className="btn btn-ghost" onClick={() => { setMode("view"); setJsonError(null); }}>Cancel</button>
        </>}
        {mode === "reject" && <>
          <button type="button" className="btn btn-danger" disabled={busy} onClick={() => onDecide({ type: "reject", message: reason.trim() || undefined })}>Reject</button>
          <button type="button" className="btn btn-ghost" onClick={() => setMode("view")}>Cancel</button>
        </>}
      </div>
    </div>
  );
}

/**
 * The approval card for one interrupt. With several actions, each gets a decision and the
 * run resumes once all are decided (the middleware expects one decision per action, in order).
 */
export function ApprovalCard({ actions, onResume, busy }: {
  actions: ActionRequest[];
  onResume: (decisions: Decision[]) => void;
  busy: boolean;
}) {
  const [decisions, setDecisions] = useState<Array<Decision | null>>(() => actions.map(() => null));
  const decide = (i: number, d: Decision) => {
    const next = decisions.map((x, j) => (j === i ? d : x));
    setDecisions(next);
    if (next.every(Boolean)) onResume(next as Decision[]);
  };
  return (
    <section className="approval-card" aria-label="Approval required" data-testid="approval-card">
      <header className="approval-head">
        <Icon name="shield" />
        <div>
          <strong>Approval required</strong>
          <span className="muted small">The agent paused before running {actions.length === 1 ? "this action" : "these actions"}.</span>
        </div>
      </header>
      {actions.map((a, i) =>
        decisions[i] ? (
          <div key={i} className="approval-decided muted small">{a.name}: {decisions[i]!.type === "approve" ? "approved" : decisions[i]!.type === "edit" ? "edited and approved" : "rejected"}</div>
        ) : (
          <ActionReview key={i} action={a} index={i} total={actions.length} busy={busy} onDecide={(d) => decide(i, d)} />
        ),
      )}
    </section>
  );
}
