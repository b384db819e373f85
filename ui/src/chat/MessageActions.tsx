/** The small toolbar under a message: copy (every message), retry (the last answer), edit (a user message). */
import { useEffect, useState } from "react";
import { Icon } from "../icons.tsx";

/** Puts `text` on the clipboard; falls back to a hidden textarea where the Clipboard API is refused. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch { /* not allowed here (an insecure origin, a denied permission): the old way */ }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

export function MessageActions({ text, onRetry, onEdit, disabled }: {
  text: string;
  onRetry?: () => void;
  onEdit?: () => void;
  /** While a run is going: retry and edit wait for it (copy never does). */
  disabled: boolean;
}) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 1500);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <div className="msg-actions" data-testid="msg-actions">
      <button type="button" className="msg-action" aria-label={copied ? "Copied" : "Copy message"} title={copied ? "Copied" : "Copy"}
        onClick={() => void copyText(text).then(() => setCopied(true))} disabled={!text}>
        <Icon name={copied ? "check" : "copy"} />
      </button>
      {onEdit && (
        <button type="button" className="msg-action" aria-label="Edit message" title="Edit and resend" onClick={onEdit} disabled={disabled}>
          <Icon name="edit" />
        </button>
      )}
      {onRetry && (
        <button type="button" className="msg-action" aria-label="Retry" title="Retry this answer" onClick={onRetry} disabled={disabled}>
          <Icon name="retry" />
        </button>
      )}
    </div>
  );
}
