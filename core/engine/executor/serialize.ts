/**
 * Turns LangGraph/LangChain values into the JSON the Agent API speaks: messages as plain
 * dicts (`{ type: "ai", content, id, tool_calls, ... }`), interrupts as `{ id, value }`,
 * everything else as plain JSON.
 */
import { type BaseMessage, isBaseMessage } from "@langchain/core/messages";

const MESSAGE_FIELDS = [
  "content",
  "id",
  "name",
  "additional_kwargs",
  "response_metadata",
  "tool_calls",
  "invalid_tool_calls",
  "tool_call_chunks",
  "usage_metadata",
  "tool_call_id",
  "status",
  "artifact",
] as const;

/** A message as the Agent API dict. */
export function messageToWire(m: BaseMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { type: m.getType() };
  const rec = m as unknown as Record<string, unknown>;
  for (const f of MESSAGE_FIELDS) if (rec[f] !== undefined) out[f] = toWire(rec[f]);
  if (out.name === undefined) out.name = null;
  if (out.id === undefined) out.id = null;
  return out;
}

/** Deeply converts a value to API JSON. */
export function toWire(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value !== "object") return typeof value === "bigint" ? Number(value) : value;
  if (depth > 64) return null;
  if (Array.isArray(value)) return value.map((v) => toWire(v, depth + 1));
  if (isBaseMessage(value)) return messageToWire(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Array.from(value);
  const proto = Object.getPrototypeOf(value);
  const rec = value as Record<string, unknown>;
  if (proto !== Object.prototype && proto !== null) {
    const name = proto?.constructor?.name;
    if (name === "Interrupt") return { value: toWire(rec.value, depth + 1), id: rec.id ?? null };
    if (name === "Command" || name === "Send") {
      const plain: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(rec)) {
        if (k !== "lg_name" && k !== "lc_direct_tool_output" && v !== undefined) plain[k] = toWire(v, depth + 1);
      }
      return plain;
    }
    if (typeof (rec as { toJSON?: unknown }).toJSON === "function" && !("lc_serializable" in rec)) {
      return toWire((rec as { toJSON: () => unknown }).toJSON(), depth + 1);
    }
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec)) {
    if (v !== undefined && typeof v !== "function") out[k] = toWire(v, depth + 1);
  }
  return out;
}

/** `JSON.stringify(toWire(value))`. */
export function wireJson(value: unknown): string {
  return JSON.stringify(toWire(value));
}
