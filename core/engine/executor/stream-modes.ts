/**
 * Stream modes of the Agent API and how each maps to LangGraph's: the SSE event names
 * (`values`, `updates`, `messages` for `messages-tuple`, `messages/partial|complete|metadata`
 * for `messages`, ...), with `|ns1|ns2` appended for subgraph namespaces.
 */
import { AIMessageChunk, type BaseMessage, isBaseMessage, isBaseMessageChunk } from "@langchain/core/messages";
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

export interface Emit {
  (event: string, data: unknown): void;
}

/**
 * Converts LangGraph stream chunks `[namespace, mode, payload]` to SSE events (`translate`
 * tells them to its `emit`). Keeps the accumulated message chunks for the legacy `messages` mode.
 */
export class ChunkTranslator {
  readonly #modes: Set<StreamMode>;
  readonly #partial = new Map<string, AIMessageChunk | BaseMessage>();

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
    if (this.#modes.has("messages-tuple")) emit(`messages${suffix}`, [messageToWire(message), toWire(metadata)]);
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

  /** Emits `messages/complete` for streamed messages when the run ends. */
  complete(emit: Emit): void {
    if (!this.#modes.has("messages")) return;
    for (const m of this.#partial.values()) if (isBaseMessage(m)) emit("messages/complete", [messageToWire(m)]);
    this.#partial.clear();
  }
}
