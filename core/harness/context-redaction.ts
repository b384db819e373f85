/**
 * The model's context is a way out of the process too: a tool result (a shell printing the
 * environment, a subagent's answer, an MCP server quoting its token) is redacted
 * (core/kernel/redact.ts) in what is sent to the model. The thread's state keeps the raw text.
 */
import { createMiddleware, ToolMessage } from "langchain";
import type { BaseMessage } from "@langchain/core/messages";
import { redact } from "../kernel/index.ts";

function redactContent(content: ToolMessage["content"]): ToolMessage["content"] {
  if (typeof content === "string") return redact(content);
  return content.map((
    part,
  ) => (part && typeof part === "object" && "text" in part && typeof part.text === "string"
    ? { ...part, text: redact(part.text) }
    : part)
  ) as ToolMessage["content"];
}

function redacted(message: BaseMessage): BaseMessage {
  if (!ToolMessage.isInstance(message)) return message;
  const content = redactContent(message.content);
  if (JSON.stringify(content) === JSON.stringify(message.content)) return message;
  return new ToolMessage({ ...message, content, tool_call_id: message.tool_call_id });
}

/**
 * Middleware that redacts secrets from the tool results in every model request.
 *
 * @example
 * createAgent({ model, middleware: [contextRedactionMiddleware()] });
 */
export function contextRedactionMiddleware() {
  return createMiddleware({
    name: "AgentcliContextRedaction",
    wrapModelCall: (request, handler) => handler({ ...request, messages: request.messages.map(redacted) }),
  });
}
