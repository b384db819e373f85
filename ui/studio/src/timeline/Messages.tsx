/** A state's messages, rendered as a conversation (role, text, tool calls). */
interface Msg {
  type?: string;
  role?: string;
  content?: unknown;
  name?: string;
  tool_calls?: Array<{ name: string; args: unknown }>;
}

function text(c: unknown): string {
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((b) => (typeof b === "string" ? b : (b as { text?: string }).text ?? "")).join("");
  return JSON.stringify(c);
}

export function Messages({ messages }: { messages: Msg[] }) {
  return (
    <ol className="messages" data-testid="state-messages">
      {messages.map((m, i) => (
        <li key={i} className={`msg ${m.type ?? m.role}`}>
          <span className="role">{m.type ?? m.role}{m.name ? ` · ${m.name}` : ""}</span>
          <span className="body">{text(m.content)}</span>
          {m.tool_calls?.map((t, j) => <code key={j} className="small">{t.name}({JSON.stringify(t.args)})</code>)}
        </li>
      ))}
    </ol>
  );
}
