/**
 * Whether LangChain can read a chat message of a run's input or a state update, decided by
 * LangChain's own coercion (the one LangGraph's `messages` reducer applies), before anything
 * is stored. What it reads is what LangGraph's server accepts: role/type dicts (`user`,
 * `human`, `assistant`, `ai`, `system`, `developer`, `tool`, `remove`), `[role, content]`
 * pairs, plain strings, LangChain serialized messages. (What it reads but a model may not, such
 * as a number for content, LangGraph's server runs too; the model's error then fails the run.)
 * A message it cannot read would fail the run, and every later read of the thread's state, so
 * it is a 422 naming the message and the field instead.
 *
 * @example
 * checkMessageShape({ foo: 1 }, "input.messages[0]");
 * // throws 422: Invalid request: input.messages[0]: has no "role" or "type", so it is not a chat message
 */
import { coerceMessageLikeToMessage } from "@langchain/core/messages";
import { type AgentcliError, userError } from "../../kernel/index.ts";

const ROLES = ["user", "human", "assistant", "ai", "system", "developer", "tool", "remove"];
const EXAMPLE = `{"role": "user", "content": "Hi"}`;
const HINT = `Send each message as an object with a "role" (${
  ROLES.slice(0, 7).map((r) => `"${r}"`).join(", ")
}) and a "content" (a string or an array of content blocks), e.g. ${EXAMPLE}.`;

function invalid(field: string, problem: string): AgentcliError {
  return userError("UNPROCESSABLE", { message: `Invalid request: ${field}: ${problem}`, hint: HINT });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** LangChain's serialized form: `{ lc: 1, type: "constructor", id: [..., "HumanMessage"], kwargs }`. */
function isSerialized(v: Record<string, unknown>): boolean {
  return v.lc === 1 && Array.isArray(v.id) && isRecord(v.kwargs);
}

/** The fields of a message object as LangChain reads them, and where they are in the request. */
function fieldsOf(
  m: Record<string, unknown>,
  at: string,
): { fields: Record<string, unknown>; at: string; kind: "role" | "type" | null } {
  if (isSerialized(m)) return { fields: m.kwargs as Record<string, unknown>, at: `${at}.kwargs`, kind: null };
  if ("role" in m) return { fields: m, at, kind: "role" };
  if ("type" in m) return { fields: m, at, kind: "type" };
  return { fields: m, at, kind: null };
}

/**
 * Throws a 422 when LangChain cannot read `message` as a chat message (`field` names it in
 * the request, e.g. `input.messages[2]`): the field that is wrong and what it must be.
 */
export function checkMessageShape(message: unknown, field: string): void {
  if (typeof message === "string") return;
  if (Array.isArray(message)) {
    const [role] = message;
    if (typeof role !== "string" || !ROLES.includes(role)) {
      throw invalid(
        `${field}[0]`,
        `${JSON.stringify(role) ?? "nothing"} is not a message role (a [role, content] pair names one of ${
          ROLES.map((r) => `"${r}"`).join(", ")
        })`,
      );
    }
    coerceOrExplain(message, field);
    return;
  }
  if (!isRecord(message)) {
    throw invalid(
      field,
      `must be a message object, e.g. ${EXAMPLE}, not ${message === null ? "null" : typeof message}`,
    );
  }
  const { fields, at, kind } = fieldsOf(message, field);
  if (kind === null && !isSerialized(message)) {
    throw invalid(field, `has no "role" or "type", so it is not a chat message`);
  }
  if (kind !== null) {
    const role = fields[kind];
    if (typeof role !== "string" || !ROLES.includes(role)) {
      throw invalid(
        `${at}.${kind}`,
        `${JSON.stringify(role)} is not a message ${kind}; use one of ${ROLES.map((r) => `"${r}"`).join(", ")}`,
      );
    }
    if (role === "tool" && !("tool_call_id" in fields)) {
      throw invalid(`${at}.tool_call_id`, `a tool message needs the id of the tool call it answers`);
    }
    if (role === "remove" && typeof fields.id !== "string") {
      throw invalid(`${at}.id`, `a remove message needs the id (a string) of the message to remove`);
    }
  }
  // OpenAI-form tool calls: LangChain parses their arguments, and cannot when they are not JSON.
  if (Array.isArray(fields.tool_calls)) {
    fields.tool_calls.forEach((c, i) => {
      if (
        !isRecord(c) || !isRecord(c.function) || typeof c.function.arguments !== "string" || typeof c.id !== "string"
      ) return;
      try {
        JSON.parse(c.function.arguments);
      } catch {
        throw invalid(`${at}.tool_calls[${i}].function.arguments`, "must be a JSON string");
      }
    });
  }
  coerceOrExplain(message, field);
}

/** What the checks above let through, LangChain itself must read; its refusal, without its stack or URL, otherwise. */
function coerceOrExplain(message: unknown, field: string): void {
  try {
    coerceMessageLikeToMessage(message as never);
  } catch (err) {
    const first = (err instanceof Error ? err.message : String(err)).split("\n")[0]!.trim();
    throw invalid(field, `LangChain cannot read it as a chat message (${first})`);
  }
}
