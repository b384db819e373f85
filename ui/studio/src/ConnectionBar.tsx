/** Which Agent API the studio inspects: this server (signed in, when it has sign-in), or another base URL with a key or token; and the theme. */
import { useState } from "react";
import type { Connection } from "./connection.ts";
import { useTheme } from "./useTheme.ts";

export function ConnectionBar(
  { value, onChange, signedIn }: { value: Connection; onChange: (c: Connection) => void; signedIn: boolean },
) {
  const [draft, setDraft] = useState(value);
  const [open, setOpen] = useState(false);
  const [theme, toggle] = useTheme();
  return (
    <div className="conn">
      <button className="ghost" data-testid="connection-toggle" onClick={() => setOpen(!open)} aria-expanded={open}>
        {value.url ? value.url : "This server"}
      </button>
      <button className="ghost" data-testid="theme-toggle" onClick={toggle} aria-label={`Switch to ${theme === "dark" ? "light" : "dark"} theme`}>
        {theme === "dark" ? "☀" : "☾"}
      </button>
      {open && (
        <form
          className="conn-form"
          data-testid="connection-form"
          onSubmit={(e) => {
            e.preventDefault();
            onChange(draft);
            setOpen(false);
          }}
        >
          <label>
            Base URL <input value={draft.url} placeholder="this server" onChange={(e) => setDraft({ ...draft, url: e.target.value })} />
          </label>
          <label>
            API key (x-api-key) <input type="password" value={draft.apiKey} onChange={(e) => setDraft({ ...draft, apiKey: e.target.value })} />
          </label>
          <label>
            Bearer token <input type="password" value={draft.token} onChange={(e) => setDraft({ ...draft, token: e.target.value })} />
          </label>
          <p className="muted">
            Kept in this browser only. Empty URL: the server that serves this page
            {signedIn ? ", with your sign-in (the key and token are for other servers)" : ""}.
          </p>
          <button type="submit">Connect</button>
        </form>
      )}
    </div>
  );
}
