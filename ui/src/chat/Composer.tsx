/** The message box: Enter sends, Shift+Enter adds a line, Escape stops a running reply. */
import { forwardRef, useImperativeHandle, useLayoutEffect, useRef, useState } from "react";
import { Icon } from "../icons.tsx";

export interface ComposerHandle {
  focus(): void;
  setText(text: string): void;
}

export const Composer = forwardRef<ComposerHandle, {
  onSend: (text: string) => void;
  onStop: () => void;
  busy: boolean;
  disabled: boolean;
  placeholder: string;
}>(function Composer({ onSend, onStop, busy, disabled, placeholder }, ref) {
  const [text, setText] = useState("");
  const area = useRef<HTMLTextAreaElement>(null);
  useImperativeHandle(ref, () => ({
    focus: () => area.current?.focus(),
    setText: (t) => { setText(t); area.current?.focus(); },
  }));
  useLayoutEffect(() => {
    const el = area.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 220)}px`;
  }, [text]);
  const send = () => {
    const t = text.trim();
    if (!t || busy || disabled) return;
    onSend(t);
    setText("");
  };
  return (
    <form className="composer" onSubmit={(e) => { e.preventDefault(); send(); }}>
      <textarea ref={area} rows={1} value={text} placeholder={placeholder} aria-label="Message" disabled={disabled}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) { e.preventDefault(); send(); }
          if (e.key === "Escape" && busy) onStop();
        }} />
      {busy ? (
        <button type="button" className="composer-btn stop" onClick={onStop} aria-label="Stop"><Icon name="stop" /></button>
      ) : (
        <button type="submit" className="composer-btn" disabled={!text.trim() || disabled} aria-label="Send"><Icon name="send" /></button>
      )}
    </form>
  );
});
