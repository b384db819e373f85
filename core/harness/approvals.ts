/**
 * Approval gates (`approvals.toml`): listed tools interrupt before they run, with the
 * action to approve, in the human-in-the-loop shape clients build approval cards for:
 *
 * interrupt value: `{ action_requests: [{ name, args, description }],
 *                     review_configs: [{ action_name, allowed_decisions }] }`
 * resume value:    `{ decisions: [{ type: "approve" }
 *                                | { type: "edit", edited_action: { name, args } }
 *                                | { type: "reject", message? }] }` (one per action, in order)
 *
 * approve runs the tool as called; edit runs it with the edited name and args; reject does
 * not run it and tells the model the message (or that the user rejected the call).
 */
import { AIMessage, createMiddleware, ToolMessage } from "langchain";
import { interrupt } from "@langchain/langgraph";
import { agentcliError, ResumeDecisionsCount, ResumeDecisionType, ResumeEditInvalid } from "../kernel/index.ts";

export const ALLOWED_DECISIONS = ["approve", "edit", "reject"] as const;

/** A tool the agent may call, with the MCP server it comes from when it has one. */
export interface ToolOrigin {
  name: string;
  server?: string;
  tool?: string;
}

/**
 * Resolves `approvals.toml` entries (`execute`, `write_file`, `<server>/<tool>`,
 * `<server>/*`) to the names of tools the model sees; entries matching nothing are warned.
 */
export function resolveApprovals(
  patterns: readonly string[],
  tools: readonly ToolOrigin[],
  warn: (msg: string) => void,
): Set<string> {
  const names = new Set<string>();
  for (const pattern of patterns) {
    const slash = pattern.indexOf("/");
    let matched: ToolOrigin[];
    if (slash < 0) matched = tools.filter((t) => t.name === pattern && !t.server);
    else {
      const server = pattern.slice(0, slash);
      const tool = pattern.slice(slash + 1);
      matched = tools.filter((t) => t.server === server && (tool === "*" || t.tool === tool));
    }
    if (matched.length === 0) warn(`approvals.toml: "${pattern}" matches no tool of this agent; it gates nothing.`);
    for (const t of matched) names.add(t.name);
  }
  return names;
}

interface ToolCallLike {
  id?: string;
  name: string;
  args: Record<string, unknown>;
  type?: "tool_call";
}

interface Decision {
  type?: string;
  edited_action?: { name?: unknown; args?: unknown };
  editedAction?: { name?: unknown; args?: unknown };
  message?: unknown;
}

/** Middleware that interrupts before any call of the gated tools. */
export function approvalMiddleware(gated: ReadonlySet<string>) {
  return createMiddleware({
    name: "AgentcliApprovals",
    afterModel: {
      canJumpTo: ["model"],
      hook: async (state) => {
        const last = [...state.messages].reverse().find((m) => AIMessage.isInstance(m)) as AIMessage | undefined;
        const calls = (last?.tool_calls ?? []) as ToolCallLike[];
        const answered = new Set(
          state.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id),
        );
        const pending = calls.filter((c) => gated.has(c.name) && !answered.has(c.id ?? ""));
        if (!last || pending.length === 0) return undefined;
        const response = interrupt({
          action_requests: pending.map((c) => ({ name: c.name, args: c.args, description: describe(c) })),
          review_configs: pending.map((c) => ({ action_name: c.name, allowed_decisions: [...ALLOWED_DECISIONS] })),
        }) as { decisions?: Decision[] } | undefined;
        const decisions = response?.decisions;
        if (!Array.isArray(decisions) || decisions.length !== pending.length) {
          throw agentcliError(ResumeDecisionsCount, { count: pending.length });
        }
        const revised = new Map<string, ToolCallLike>();
        const rejections: ToolMessage[] = [];
        pending.forEach((call, i) => {
          const d = decisions[i] ?? {};
          if (d.type === "approve") return;
          if (d.type === "edit") {
            const edited = d.edited_action ?? d.editedAction;
            if (!edited || typeof edited.name !== "string" || !edited.args || typeof edited.args !== "object") {
              throw agentcliError(ResumeEditInvalid, { index: i });
            }
            revised.set(call.id ?? "", { ...call, name: edited.name, args: edited.args as Record<string, unknown> });
            return;
          }
          if (d.type === "reject") {
            const message = typeof d.message === "string" && d.message
              ? d.message
              : `The user rejected the call of "${call.name}".`;
            rejections.push(
              new ToolMessage({ content: message, name: call.name, tool_call_id: call.id ?? "", status: "error" }),
            );
            return;
          }
          throw agentcliError(ResumeDecisionType, { index: i, type: String(JSON.stringify(d.type)) });
        });
        const updated = new AIMessage({
          content: last.content,
          id: last.id,
          name: last.name,
          additional_kwargs: last.additional_kwargs,
          response_metadata: last.response_metadata,
          usage_metadata: last.usage_metadata,
          tool_calls: calls.map((c) => revised.get(c.id ?? "") ?? c),
        });
        const allRejected = rejections.length > 0 &&
          calls.every((c) => answered.has(c.id ?? "") || rejections.some((r) => r.tool_call_id === c.id));
        return { messages: [updated, ...rejections], ...(allRejected ? { jumpTo: "model" as const } : {}) };
      },
    },
  });
}

function describe(call: ToolCallLike): string {
  return `Approval required before running "${call.name}".\n\nArgs: ${JSON.stringify(call.args, null, 2)}`;
}
