/**
 * Stream modes of the Agent API and how each maps to LangGraph's: the SSE event names
 * (`values`, `updates`, `messages` for `messages-tuple`, `messages/partial|complete|metadata`
 * for `messages`, ...), with `|ns1|ns2` appended for subgraph namespaces.
 */
import { AIMessageChunk, type BaseMessage, isBaseMessage, isBaseMessageChunk } from "@langchain/core/messages";
import { redact } from "../../kernel/index.ts";
import { debugChunk } from "./debug-events.ts";
import { messageToWire, toWire } from "./serialize.ts";

export const STREAM_MODES = [
  "values",
  "updates",
  "messages",
  "messages-tuple",
  "custom",
  "debug",
  "events",
  "tasks",
  "checkpoints",
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];
export type LibStreamMode = "values" | "updates" | "messages" | "custom" | "debug" | "tasks" | "checkpoints";

/** LangGraph stream modes needed to serve the requested API modes. */
export function libModes(modes: readonly StreamMode[]): LibStreamMode[] {
  const out = new Set<LibStreamMode>();
  for (const m of modes) {
    if (m === "messages-tuple" || m === "messages") out.add("messages");
    else if (m !== "events") out.add(m);
  }
  return [...out];
}

/**
 * Publishes one event of the run. `data` is redacted on its way (core/kernel/redact.ts), unless it
 * is a JSON text redacted already (`redacted`: the messages-tuple path, which redacts its parts).
 */
export interface Emit {
  (event: string, data: unknown, redacted?: boolean): void;
}

/**
 * Converts LangGraph stream chunks `[namespace, mode, payload]` to SSE events (`translate`
 * tells them to its `emit`). Keeps the accumulated message chunks for the legacy `messages` mode.
 */
export class ChunkTranslator {
  readonly #modes: Set<StreamMode>;
  readonly #partial = new Map<string, AIMessageChunk | BaseMessage>();
  /**
   * The metadata of each streaming model call as redacted JSON. LangGraph passes one metadata
   * object with every token of a call: converted, serialized and redacted once, not per token
   * (about 600 of a token event's 850 bytes).
   */
  readonly #metadataJson = new WeakMap<object, string>();

  constructor(modes: readonly StreamMode[]) {
    this.#modes = new Set(modes);
  }

  translate(chunk: { ns: string[]; mode: LibStreamMode; payload: unknown; emit: Emit }): void {
    const { ns, mode, payload, emit } = chunk;
    const suffix = ns.length ? `|${ns.join("|")}` : "";
    if (mode !== "messages") {
      if (!this.#modes.has(mode)) return;
      emit(
        `${mode}${suffix}`,
        toWire(mode === "debug" || mode === "tasks" || mode === "checkpoints" ? debugChunk(mode, payload) : payload),
      );
      return;
    }
    const [message, metadata] = payload as [BaseMessage, Record<string, unknown>];
    if (this.#modes.has("messages-tuple")) {
      // Redacted in two parts: a secret lies inside a JSON string of one or the other, never across them.
      const meta = this.#metadataJsonOf(metadata);
      emit(`messages${suffix}`, `[${redact(JSON.stringify(messageToWire(message)))},${meta}]`, true);
    }
    if (!this.#modes.has("messages")) return;
    const id = message.id ?? "";
    const prev = this.#partial.get(id);
    if (!prev) emit(`messages/metadata${suffix}`, { [id]: { metadata: toWire(metadata) } });
    let merged: BaseMessage = message;
    if (prev && isBaseMessageChunk(prev) && isBaseMessageChunk(message)) {
      merged = (prev as AIMessageChunk).concat(message as AIMessageChunk);
    }
    this.#partial.set(id, merged);
    emit(`messages/${isBaseMessageChunk(message) ? "partial" : "complete"}${suffix}`, [messageToWire(merged)]);
  }

  #metadataJsonOf(metadata: Record<string, unknown>): string {
    if (typeof metadata !== "object" || metadata === null) return redact(JSON.stringify(toWire(metadata)));
    let json = this.#metadataJson.get(metadata);
    if (json === undefined) this.#metadataJson.set(metadata, json = redact(JSON.stringify(toWire(metadata))));
    return json;
  }

  /** Emits `messages/complete` for streamed messages when the run ends. */
  complete(emit: Emit): void {
    if (!this.#modes.has("messages")) return;
    for (const m of this.#partial.values()) if (isBaseMessage(m)) emit("messages/complete", [messageToWire(m)]);
    this.#partial.clear();
  }
}
