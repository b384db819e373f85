/**
 * Turns a failing tool call (an MCP server gone, a sandbox without runtime, a bad argument)
 * into an error result the model sees, instead of failing the run. Interrupts (approval
 * gates) pass through. The result is short and has no stack trace or install path (it
 * reaches the client too, in the thread's messages): arguments that fail the tool's schema
 * read "Invalid arguments for read_file: file_path: expected string, received number".
 */
import { createMiddleware, ToolInvocationError, ToolMessage } from "langchain";
import { isGraphInterrupt } from "@langchain/langgraph";
import { AgentcliError, errorText, redact } from "../kernel/index.ts";

const SCHEMA_MISMATCH = "Received tool input did not match expected schema";

export function toolErrorsMiddleware() {
  return createMiddleware({
    name: "AgentcliToolErrors",
    wrapToolCall: async (request, handler) => {
      try {
        return await handler(request);
      } catch (err) {
        if (isGraphInterrupt(err)) throw err;
        if (err instanceof Error && err.name === "AbortError") throw err;
        return new ToolMessage({
          // The model sees the error: never a secret an upstream service quoted.
          content: redact(toolErrorMessage(request.toolCall.name, err)),
          name: request.toolCall.name,
          tool_call_id: request.toolCall.id ?? "",
          status: "error",
        });
      }
    },
  });
}

/**
 * What the model (and the client) is told about a failed tool call: for arguments that do not
 * match the tool's schema, which ones and why; otherwise the error's message (and hint).
 *
 * @example
 * toolErrorMessage("read_file", err); // "Invalid arguments for read_file: file_path: expected string, received number"
 */
export function toolErrorMessage(toolName: string, err: unknown): string {
  // LangChain wraps what the tool threw, quoting its stack in the message: read the original.
  const inner = ToolInvocationError.isInstance(err) ? err.toolError : err;
  const message = inner instanceof Error ? inner.message : String(inner);
  if (message.startsWith(SCHEMA_MISMATCH)) {
    const issues = schemaIssues(message.slice(SCHEMA_MISMATCH.length));
    return `Invalid arguments for ${toolName}: ${
      issues || "they do not match the tool's schema"
    }. Call it again with arguments that match its schema.`;
  }
  const hint = inner instanceof AgentcliError && inner.hint ? `\n${inner.hint}` : "";
  return `Error: ${errorText(inner) || "the tool failed"}${hint}`;
}

/**
 * "file_path: expected string, received number; limit: ..." from LangChain's report of a
 * schema mismatch: zod's pretty form ("✖ Invalid input: ...\n  → at file_path") or, for
 * JSON-schema tools, its "Details:" lines.
 */
function schemaIssues(report: string): string {
  const out: string[] = [];
  const lines = report.split("\n").map((l) => l.trim()).filter(Boolean);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("✖")) {
      const what = line.slice(1).trim().replace(/^Invalid input:\s*/, "");
      const at = lines[i + 1]?.startsWith("→ at ") ? lines[++i]!.slice("→ at ".length) : "";
      out.push(at ? `${at}: ${what}` : what);
    } else if (line.startsWith("Details:")) {
      out.push(line.slice("Details:".length).trim());
    } else if (!line.startsWith("→")) {
      out.push(line);
    }
  }
  return errorText(out.join("; "));
}
