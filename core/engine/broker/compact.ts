/**
 * The compaction of a run's stream log at its end: what is kept of an ended run's stream is
 * bounded by what the run produced (its messages, its last state), not by its token count
 * nor by its steps times its state. Events keep their ids; the ids of dropped events are
 * skipped on a replay. The rules, per event name (a subgraph's `|ns` suffix is a name of its
 * own):
 *
 * - `messages` (the `messages-tuple` mode): a streamed AI message's chunks (the events with
 *   its id) become one event, the whole message (the chunks concatenated as LangChain does),
 *   at the id of its last chunk, with its first chunk's metadata. A message that came whole
 *   (one event) stays as it is.
 * - `messages/partial`: only the last of a message, and none when `messages/complete` of it
 *   follows. `messages/metadata` and `messages/complete` stay.
 * - `values` and `checkpoints`: only the last (each carries the whole state).
 * - `debug`: only the last `checkpoint`; a `task` (its input is the state) goes when its
 *   `task_result` follows. `tasks`: a task's start goes when its result follows.
 * - `events`: a model's `on_chat_model_stream`/`on_llm_stream` tokens go when its
 *   `on_chat_model_end`/`on_llm_end` (which carries the whole output) follows.
 * - anything else (`metadata`, `updates`, `custom`, `error`, ...) stays.
 *
 * Resuming after the end with `Last-Event-ID` stays correct at the stream's end: the last
 * `values` event (the run's final state) and everything after it keep their ids and data. A
 * client that resumes from inside a folded message gets that message whole, again (at its
 * last chunk's id): it replaces, by message id, what it had of it, as the `values` event
 * after it does (the SDK's useStream shows the `values` state).
 */
import { AIMessageChunk } from "@langchain/core/messages";
import { redact } from "../../kernel/index.ts";
import type { RunEvent } from "../../storage/index.ts";
import { messageToWire } from "../executor/serialize.ts";

/** What to write for a run's log at its end. */
export interface CompactedLog {
  /** Events to write (as one batch). */
  write: RunEvent[];
  /** `write` is the run's whole log, compacted: what was logged of it before goes. */
  replace: boolean;
}

/** An event's name split: `messages/partial|a|b` -> base `messages/partial`, suffix `|a|b`. */
function split(name: string): { base: string; suffix: string } {
  const at = name.indexOf("|");
  return at < 0 ? { base: name, suffix: "" } : { base: name.slice(0, at), suffix: name.slice(at) };
}

function parse(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** The chunks of one streamed message (one `messages` event name). */
interface Streamed {
  ids: number[];
  chunks: Record<string, unknown>[];
  metadata: unknown;
}

const isEmpty = (v: unknown) =>
  v === undefined || v === null ||
  (Array.isArray(v) ? v.length === 0 : typeof v === "object" && !Object.keys(v).length);

/** Whether a chunk carries anything but its text (tool call chunks, kwargs, metadata, usage). */
const hasExtras = (c: Record<string, unknown>) =>
  !isEmpty(c.tool_call_chunks) || !isEmpty(c.additional_kwargs) || !isEmpty(c.response_metadata) ||
  !isEmpty(c.usage_metadata);

/**
 * Concatenates a message's wire chunks as LangChain does (content, tool call chunks, usage,
 * metadata). Text chunks (most of a reply) are joined as strings; LangChain merges the rest:
 * the same result, without a LangChain message per token.
 */
function fold(chunks: Record<string, unknown>[]): Record<string, unknown> | null {
  if (chunks.every((c) => typeof c.content === "string")) {
    const text = chunks.map((c) => c.content as string).join("");
    const rest = chunks.filter(hasExtras).map((c) => ({ ...c, content: "" }));
    const merged = foldChunks(rest.length ? rest : [{ ...chunks[0]!, content: "" }]);
    if (merged) merged.content = text;
    return merged;
  }
  return foldChunks(chunks);
}

/** LangChain's concatenation of wire chunks, as wire JSON (null: they cannot be concatenated). */
function foldChunks(chunks: Record<string, unknown>[]): Record<string, unknown> | null {
  try {
    let merged: AIMessageChunk | null = null;
    for (const c of chunks) {
      const chunk = new AIMessageChunk({
        content: (c.content ?? "") as string,
        id: c.id as string,
        name: (c.name ?? undefined) as string | undefined,
        tool_call_chunks: (c.tool_call_chunks ?? []) as AIMessageChunk["tool_call_chunks"],
        additional_kwargs: (c.additional_kwargs ?? {}) as Record<string, unknown>,
        response_metadata: (c.response_metadata ?? {}) as Record<string, unknown>,
        usage_metadata: (c.usage_metadata ?? undefined) as AIMessageChunk["usage_metadata"],
      });
      merged = merged ? merged.concat(chunk) : chunk;
    }
    return merged ? messageToWire(merged) : null;
  } catch {
    return null; // chunks LangChain cannot concatenate stay as they are
  }
}

/** Which events the rules drop, and the new data of the folded ones. */
class Plan {
  readonly drop = new Set<number>();
  readonly data = new Map<number, string>();
  /** The last event of each name whose events replace each other (`values`, ...). */
  readonly #last = new Map<string, number>();
  readonly #streamed = new Map<string, Streamed>();
  /** `messages/partial`: the last of each message; `messages/complete`: the messages completed. */
  readonly #partial = new Map<string, number>();
  readonly #completed = new Set<string>();
  /** Events that go when an event with the same key comes later (task starts, model tokens). */
  readonly #untilDone = new Map<string, number[]>();
  readonly #done = new Set<string>();

  add(e: RunEvent): void {
    const { base, suffix } = split(e.event);
    if (base === "values" || base === "checkpoints") this.#replace(e.event, e.id);
    else if (base === "messages") this.#message(e, suffix);
    else if (base === "messages/partial" || base === "messages/complete") this.#legacy(e, base, suffix);
    else if (base === "debug" || base === "tasks" || base === "events") this.#step(e, base);
  }

  #replace(key: string, id: number): void {
    const prev = this.#last.get(key);
    if (prev !== undefined) this.drop.add(prev);
    this.#last.set(key, id);
  }

  #message(e: RunEvent, suffix: string): void {
    const tuple = parse(e.data);
    if (!Array.isArray(tuple)) return;
    const m = tuple[0] as Record<string, unknown> | null;
    // A model's chunks go out as `ai` (or `AIMessageChunk`) with the message's id; LangGraph
    // sends a message whole only when it was not streamed, so an id seen twice is chunks.
    if (!m || (m.type !== "ai" && m.type !== "AIMessageChunk") || typeof m.id !== "string") return;
    const key = `${suffix}\0${m.id}`;
    let s = this.#streamed.get(key);
    if (!s) this.#streamed.set(key, s = { ids: [], chunks: [], metadata: tuple[1] ?? null });
    s.ids.push(e.id);
    s.chunks.push(m);
  }

  #legacy(e: RunEvent, base: string, suffix: string): void {
    const list = parse(e.data);
    const id = Array.isArray(list) ? (list[0] as { id?: unknown } | null)?.id : undefined;
    if (typeof id !== "string") return;
    const key = `${suffix}\0${id}`;
    if (base === "messages/complete") {
      this.#completed.add(key);
      return;
    }
    const prev = this.#partial.get(key);
    if (prev !== undefined) this.drop.add(prev);
    this.#partial.set(key, e.id);
  }

  /** `debug`, `tasks`, `events`: the state-sized or token-sized events that something later covers. */
  #step(e: RunEvent, base: string): void {
    const d = parse(e.data) as Record<string, unknown> | null;
    if (!d || typeof d !== "object") return;
    if (base === "debug") {
      const p = d.payload as { id?: unknown } | undefined;
      if (d.type === "checkpoint") this.#replace(`${e.event}\0checkpoint`, e.id);
      else if (d.type === "task" && typeof p?.id === "string") this.#wait(`${e.event}\0${p.id}`, e.id);
      else if (d.type === "task_result" && typeof p?.id === "string") this.#done.add(`${e.event}\0${p.id}`);
    } else if (base === "tasks" && typeof d.id === "string") {
      if ("input" in d) this.#wait(`${e.event}\0${d.id}`, e.id);
      else this.#done.add(`${e.event}\0${d.id}`);
    } else if (base === "events" && typeof d.run_id === "string") {
      if (d.event === "on_chat_model_stream" || d.event === "on_llm_stream") {
        this.#wait(`${e.event}\0${d.run_id}`, e.id);
      } else if (d.event === "on_chat_model_end" || d.event === "on_llm_end") this.#done.add(`${e.event}\0${d.run_id}`);
    }
  }

  #wait(key: string, id: number): void {
    const ids = this.#untilDone.get(key);
    if (ids) ids.push(id);
    else this.#untilDone.set(key, [id]);
  }

  /** Settles what depends on later events: folds the streamed messages, drops what was covered. */
  finish(): void {
    for (const s of this.#streamed.values()) {
      if (s.ids.length < 2) continue;
      const whole = fold(s.chunks);
      if (!whole) continue;
      for (const id of s.ids.slice(0, -1)) this.drop.add(id);
      this.data.set(s.ids.at(-1)!, redact(JSON.stringify([whole, s.metadata])));
    }
    for (const [key, id] of this.#partial) if (this.#completed.has(key)) this.drop.add(id);
    for (const [key, ids] of this.#untilDone) if (this.#done.has(key)) { for (const id of ids) this.drop.add(id); }
  }
}

/**
 * Compacts a run's events (all of them, in order; `""` events are ids a resumed run skipped)
 * by the rules above: the events kept, with the folded ones' new data (null: the rules change
 * nothing). The run's log is then these alone, written as one batch by the statement that
 * records the run's end.
 */
export function compactLog(events: readonly RunEvent[]): RunEvent[] | null {
  const plan = new Plan();
  for (const e of events) if (e.event) plan.add(e);
  plan.finish();
  if (plan.drop.size === 0 && plan.data.size === 0) return null;
  const kept: RunEvent[] = [];
  for (const e of events) {
    if (!e.event || plan.drop.has(e.id)) continue;
    const data = plan.data.get(e.id);
    kept.push(data === undefined ? e : { id: e.id, event: e.event, data });
  }
  return kept;
}
