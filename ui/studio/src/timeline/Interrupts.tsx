/**
 * A checkpoint's pending interrupts, with their payload, resumable with a value; for the
 * project's approval gates (human-in-the-loop requests) Approve, Edit and Reject.
 */
import { useState } from "react";
import { Json, parseJson } from "../Json.tsx";

interface Props {
  interrupts: Array<{ id?: string; value?: unknown }>;
  busy: boolean;
  onResume: (value: unknown) => void;
}

type Action = { name: string; args: Record<string, unknown> };

function actionsOf(value: unknown): Action[] | null {
  const v = value as { actionRequests?: Action[]; action_requests?: Action[] } | null;
  const list = v?.actionRequests ?? v?.action_requests;
  return Array.isArray(list) ? list : null;
}

export function Interrupts({ interrupts, busy, onResume }: Props) {
  const [resume, setResume] = useState("");
  const [edit, setEdit] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const actions = actionsOf(interrupts[0]?.value);
  const decide = (make: (a: Action) => Record<string, unknown>) => onResume({ decisions: actions!.map(make) });
  const saveEdit = () => {
    try {
      const args = parseJson(edit ?? "", "The arguments") as Record<string, unknown>;
      decide((a) => ({ type: "edit", edited_action: { name: a.name, args }, editedAction: { name: a.name, args } }));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const generic = () => {
    try {
      onResume(parseJson(resume, "The resume value") ?? null);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div className="card interrupt" data-testid="interrupts">
      <h3>Interrupted: waiting for a value</h3>
      {interrupts.map((it, i) => <Json key={it.id ?? i} value={it.value} testId="interrupt-payload" />)}
      {actions && (
        <div className="approval" data-testid="approval">
          <button disabled={busy} onClick={() => decide(() => ({ type: "approve" }))}>Approve</button>
          <button disabled={busy} onClick={() => setEdit(JSON.stringify(actions[0]?.args ?? {}, null, 2))}>Edit</button>
          <input aria-label="Reason" placeholder="reason (reject)" value={reason} onChange={(e) => setReason(e.target.value)} />
          <button disabled={busy} onClick={() => decide(() => ({ type: "reject", message: reason || undefined }))}>Reject</button>
          {edit !== null && (
            <div>
              <textarea aria-label="Edited arguments (JSON)" rows={5} value={edit} onChange={(e) => setEdit(e.target.value)} />
              <button disabled={busy} onClick={saveEdit}>Save and approve</button>
            </div>
          )}
        </div>
      )}
      <label>Resume with any value (JSON)<textarea aria-label="Resume value" rows={2} value={resume} onChange={(e) => setResume(e.target.value)} /></label>
      <button disabled={busy} onClick={generic}>Resume</button>
      {error && <p className="banner error" role="alert">{error}</p>}
    </div>
  );
}
