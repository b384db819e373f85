/**
 * Human-in-the-loop interrupts, as LangChain's `humanInTheLoopMiddleware` raises them.
 * The JS middleware uses camelCase (`actionRequests`, `reviewConfigs`, `editedAction`), the
 * Python one snake_case; we read both and answer with both, so either runtime accepts it.
 */
export type DecisionType = "approve" | "edit" | "reject";

export interface ActionRequest {
  name: string;
  args: Record<string, unknown>;
  description?: string;
  allowed: DecisionType[];
}

export type Decision =
  | { type: "approve" }
  | { type: "edit"; edited_action: { name: string; args: Record<string, unknown> } }
  | { type: "reject"; message?: string };

/** The actions awaiting review in an interrupt value, or null when it is not a HITL request. */
export function readHitlRequest(value: unknown): ActionRequest[] | null {
  if (!value || typeof value !== "object") return null;
  const v = value as Record<string, unknown>;
  const requests = (v.actionRequests ?? v.action_requests) as Array<Record<string, unknown>> | undefined;
  if (!Array.isArray(requests)) return null;
  const configs = ((v.reviewConfigs ?? v.review_configs) as Array<Record<string, unknown>> | undefined) ?? [];
  return requests.map((r) => {
    const name = String(r.name ?? r.action ?? "action");
    const config = configs.find((c) => (c.actionName ?? c.action_name) === name);
    const allowed = ((config?.allowedDecisions ?? config?.allowed_decisions) as DecisionType[] | undefined) ?? ["approve", "edit", "reject"];
    return {
      name,
      args: (r.args && typeof r.args === "object" ? r.args : {}) as Record<string, unknown>,
      // The middleware's default description repeats the arguments, which the card shows itself.
      description: typeof r.description === "string" ? r.description.replace(/\n+\s*Args:\s*[\[{][\s\S]*$/, "").trim() || undefined : undefined,
      allowed,
    };
  });
}

/** The resume value for the decisions, carrying both spellings of the edited action. */
export function resumeValue(decisions: Decision[]): { decisions: Array<Record<string, unknown>> } {
  return {
    decisions: decisions.map((d) =>
      d.type === "edit" ? { type: "edit", edited_action: d.edited_action, editedAction: d.edited_action } : { ...d },
    ),
  };
}
