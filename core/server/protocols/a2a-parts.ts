/**
 * A2A message parts as this server writes and reads them: text and data parts, an agent's
 * message in a task, what a peer's message says, and the resume value a peer's answer to an
 * approval gate gives.
 *
 * @example
 * agentMessage(taskId, contextId, [textPart("Done.")]);
 * resumeValue(taskId, interrupts, readParts(message.parts)); // { decisions: [{ type: "approve" }] }
 */
import { type Message, type Part, Role } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";

/** A text part. */
export function textPart(text: string): Part {
  return { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

/** A data part (JSON). */
export function dataPart(value: unknown): Part {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" };
}

/** A message of the agent in a task. */
export function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** What a user message says: its text parts joined, its data parts. */
export function readParts(parts: Part[]): { text: string; data: unknown[] } {
  const text: string[] = [];
  const data: unknown[] = [];
  for (const p of parts) {
    if (p.content?.$case === "text") text.push(p.content.value);
    else if (p.content?.$case === "data") data.push(p.content.value);
    else if (p.content?.$case === "url") text.push(p.content.value);
  }
  return { text: text.join("\n"), data };
}

/** The resume value for an interrupted thread from a peer's answer; throws when unclear. */
export function resumeValue(taskId: string, interrupts: unknown[], answer: { text: string; data: unknown[] }): unknown {
  const first = interrupts[0] as { action_requests?: unknown[] } | undefined;
  const data = answer.data[0] as Record<string, unknown> | undefined;
  if (!Array.isArray(first?.action_requests)) {
    // A plain `interrupt(value)` of a custom graph takes the answer as it is.
    if (data !== undefined) return data;
    if (answer.text.trim()) return answer.text;
    throw new RequestMalformedError(`Cannot resume task "${taskId}": the message carries no answer`);
  }
  if (data && Array.isArray(data.decisions)) return { decisions: data.decisions };
  const n = first.action_requests.length;
  const approve = /^\s*(approve|approved|yes|y|ok|okay|accept)\b/i.exec(answer.text);
  if (approve || data?.decision === "approve" || data?.type === "approve") {
    return { decisions: Array.from({ length: n }, () => ({ type: "approve" })) };
  }
  const reject = /^\s*(reject|rejected|no|n|deny|denied|decline)\b[\s:,.-]*([\s\S]*)$/i.exec(answer.text);
  if (reject || data?.decision === "reject" || data?.type === "reject") {
    const message = (reject?.[2] ?? (typeof data?.message === "string" ? data.message : "")).trim();
    return { decisions: Array.from({ length: n }, () => ({ type: "reject", ...(message ? { message } : {}) })) };
  }
  throw new RequestMalformedError(
    `Cannot resume task "${taskId}": answer "approve" or "reject: <reason>", or send a data part {"decisions": [...]} with ${n} decision(s)`,
  );
}
