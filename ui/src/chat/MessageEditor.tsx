/** Edit a sent message in place: Enter (or Send) resends it from the point before it, Escape cancels. */
import { useLayoutEffect, useRef, useState } from "react";

export function MessageEditor({ initial, onSend, onCancel }: { initial: string; onSend: (text: string) => void; onCancel: () => void }) {
  const [text, setText] = useState(initial);
  const area = useRef<HTMLTextAreaElement>(null);
  useLayoutEffect(() => {
    const el = area.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 260)}px`;
  }, [text]);
  useLayoutEffect(() => {
    const el = area.current;
    if (!el) return;
    el.focus();
    el.setSelectionRange(el.value.length, el.value.length);
  }, []);
  const send = () => {
    const t = text.trim();
    if (t) onSend(t);
  };
  return (
    <form className="msg-editor" data-testid="msg-editor" onSubmit={(e) => { e.preventDefault(); send(); }}>
      <textarea ref={area} rows={1} value={text} aria-label="Edit message" onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) { e.preventDefault(); send(); }
          if (e.key === "Escape") { e.preventDefault(); onCancel(); }
        }} />
      <div className="msg-editor-buttons">
        <button type="button" className="btn btn-ghost" onClick={onCancel}>Cancel</button>
        <button type="submit" className="btn btn-primary" disabled={!text.trim()}>Send</button>
      </div>
    </form>
  );
}
