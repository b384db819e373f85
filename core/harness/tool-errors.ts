/**
 * Turns a failing tool call (an MCP server gone, a sandbox without runtime, a bad argument)
 * into an error result the model sees, instead of failing the run. Interrupts (approval
 * gates) pass through.
 */
import { createMiddleware, ToolMessage } from "langchain";
import { isGraphInterrupt } from "@langchain/langgraph";
import { AgentcliError } from "../errors.ts";
import { redact } from "../redact.ts";

export function toolErrorsMiddleware() {
  return createMiddleware({
    name: "AgentcliToolErrors",
    wrapToolCall: async (request, handler) => {
      try {
        return await handler(request);
      } catch (err) {
        if (isGraphInterrupt(err)) throw err;
        if (err instanceof Error && err.name === "AbortError") throw err;
        const hint = err instanceof AgentcliError && err.hint ? `\n${err.hint}` : "";
        return new ToolMessage({
          // The model sees the error: never a secret an upstream service quoted.
          content: redact(`Error: ${err instanceof Error ? err.message : String(err)}${hint}`),
          name: request.toolCall.name,
          tool_call_id: request.toolCall.id ?? "",
          status: "error",
        });
      }
    },
  });
}
