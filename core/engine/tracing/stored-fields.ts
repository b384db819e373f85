/**
 * A span's input and output as stored (issue 35): the messages in them by reference. A run's
 * spans carry the same messages many times over (each model call's input is the conversation
 * so far; the run's output is the thread's state; a model call's output is in both), so each
 * message is serialized, redacted and stored once per run, in the trace's `messages`, and a
 * field made of messages names each by its place there. Measured on the bench's agent (two
 * model calls and a tool call), the stored trace went from 6.8 KB to 4.3 KB (bench/README.md);
 * in a long thread, where every model call's input is the whole conversation, far more. A
 * message whose id is taken by a different message of the run (a node replaced it) is kept
 * inline, so a trace read back is the trace written.
 */
import { type BaseMessage, isBaseMessage } from "@langchain/core/messages";
import { redact } from "../../kernel/index.ts";
import type { MessageRefs } from "../../storage/index.ts";
import { toWire } from "../executor/serialize.ts";

/** An input or output longer than this (as JSON) is kept as its first characters, marked `truncated`. */
export const MAX_FIELD_CHARS = 32_768;
/** The inputs and outputs of one run's spans together keep at most this many characters; later ones keep their size only. */
export const MAX_RUN_CHARS = 8 * 1024 * 1024;

/** One run's stored fields: what is left of its budget, and its messages (JSON, redacted), each once. */
export class StoredFields {
  left = MAX_RUN_CHARS;
  /** The run's messages, each as stored once: a field names one by its place here. */
  readonly messages: string[] = [];
  /** Where a message id's message is in `messages`. */
  readonly #placed = new Map<string, number>();
  /** A message's JSON by the object (a message in several spans is one object). */
  readonly #json = new WeakMap<BaseMessage, string>();

  /**
   * A field as stored: `json` its JSON (messages by id when `refs` says how), cut at
   * {@link MAX_FIELD_CHARS} (its size only once the run's budget is spent).
   */
  field(value: unknown): { json: string; refs?: MessageRefs } {
    if (value === null || value === undefined) return { json: "null" };
    const shape = shapeOf(value);
    if (!shape) return { json: this.#cut(JSON.stringify(toWire(value)) ?? "null") };
    const list = shape === "message" ? [value as BaseMessage] : shape === "list" ? value as BaseMessage[] : (value as {
      messages: BaseMessage[];
    }).messages;
    const rest = shape === "state" ? otherKeys(value as Record<string, unknown>) : [];
    const inline = list.map((m) => this.#message(m));
    const full = join(shape, inline, rest);
    if (full.length > MAX_FIELD_CHARS || this.left <= 0) return { json: this.#cut(full) };
    this.left -= full.length;
    const byRef = list.map((m, i) => this.#ref(m, inline[i]!));
    return { json: join(shape, byRef, rest), refs: shape };
  }

  /** The message's JSON (toWire, redacted), once per object. */
  #message(m: BaseMessage): string {
    let json = this.#json.get(m);
    if (json === undefined) {
      json = redact(JSON.stringify(toWire(m)));
      this.#json.set(m, json);
    }
    return json;
  }

  /** The message as the field stores it: its place in the run's `messages`, else inline (no id, or its id's message differs). */
  #ref(m: BaseMessage, json: string): string {
    const id = typeof m.id === "string" && m.id ? m.id : null;
    if (id === null) return json;
    const at = this.#placed.get(id);
    if (at === undefined) {
      this.#placed.set(id, this.messages.length);
      return String(this.messages.push(json) - 1);
    }
    return this.messages[at] === json ? String(at) : json;
  }

  /** A field's JSON within the budget: whole, its first characters, or its size only. */
  #cut(json: string): string {
    if (this.left <= 0) return JSON.stringify({ truncated: true, chars: json.length });
    this.left -= Math.min(json.length, MAX_FIELD_CHARS);
    return json.length <= MAX_FIELD_CHARS
      ? json
      : JSON.stringify({ truncated: true, chars: json.length, preview: json.slice(0, MAX_FIELD_CHARS) });
  }
}

/** A state's entries as JSON (`"key":value`), its `messages` as null: where the list goes. */
function otherKeys(state: Record<string, unknown>): Array<string | null> {
  const entries: Array<string | null> = [];
  for (const [k, v] of Object.entries(state)) {
    if (v === undefined || typeof v === "function") continue;
    entries.push(k === "messages" ? null : `${JSON.stringify(k)}:${JSON.stringify(toWire(v))}`);
  }
  return entries;
}

/** A field's JSON with its messages as given (`parts`, JSON each; `rest`: a state's other entries). */
function join(shape: MessageRefs, parts: string[], rest: Array<string | null>): string {
  if (shape === "message") return parts[0]!;
  const list = `[${parts.join(",")}]`;
  if (shape === "list") return list;
  return `{${rest.map((e) => e ?? `"messages":${list}`).join(",")}}`;
}

/** How a value is made of messages: one, a list of them, or a state whose `messages` is such a list. */
function shapeOf(value: unknown): MessageRefs | null {
  if (isBaseMessage(value)) return "message";
  if (Array.isArray(value)) return value.length && value.every(isBaseMessage) ? "list" : null;
  if (typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return null;
  const messages = (value as { messages?: unknown }).messages;
  return Array.isArray(messages) && messages.length && messages.every(isBaseMessage) ? "state" : null;
}
