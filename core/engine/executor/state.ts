/**
 * Thread state in the Agent API's shape (`ThreadState`: values, next, tasks with their
 * interrupts, checkpoint, metadata, parent checkpoint) from a LangGraph state snapshot.
 */
import { toWire } from "./serialize.ts";
import { errorText, redact } from "../../kernel/index.ts";

// deno-lint-ignore no-explicit-any
type Snapshot = any;

function checkpointOf(config: Snapshot): Record<string, unknown> | null {
  const c = config?.configurable;
  if (!c) return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: c.checkpoint_ns ?? "",
    checkpoint_id: c.checkpoint_id ?? null,
    checkpoint_map: c.checkpoint_map ?? null,
  };
}

/** A LangGraph `StateSnapshot` as an Agent API `ThreadState`. */
export function stateToWire(s: Snapshot): Record<string, unknown> {
  const tasks = (s.tasks ?? []).map((t: Snapshot) => ({
    id: t.id,
    name: t.name,
    path: t.path ?? [],
    error: t.error ? taskError(t.error) : null,
    interrupts: toWire(t.interrupts ?? []),
    // As LangGraph's server: the task's config as it is (no `checkpoint_id`/`checkpoint_map` keys it lacks).
    checkpoint: t.state && "configurable" in t.state ? toWire(t.state.configurable ?? null) : null,
    state: t.state && "values" in t.state ? stateToWire(t.state) : null,
    result: t.result !== undefined ? toWire(t.result) : null,
  }));
  return {
    values: toWire(s.values ?? {}),
    next: s.next ?? [],
    tasks,
    checkpoint: checkpointOf(s.config),
    metadata: toWire(s.metadata ?? {}),
    created_at: s.createdAt ?? null,
    parent_checkpoint: checkpointOf(s.parentConfig),
    interrupts: tasks.flatMap((t: { interrupts: unknown[] }) => t.interrupts),
  };
}

/**
 * A failed task's error as "Name: message", without the stack frames or install paths a
 * library may quote in the message, nor a secret an upstream service quoted. LangGraph keeps a task's error as `{ message, name }`.
 */
export function taskError(e: unknown): string {
  if (e && typeof e === "object" && typeof (e as { message?: unknown }).message === "string") {
    const { name, message } = e as { name?: unknown; message: string };
    return redact(`${typeof name === "string" && name ? name : "Error"}: ${errorText(message)}`);
  }
  return redact(errorText(String(e)));
}

/** Interrupts of a snapshot keyed by task id (the `Thread.interrupts` field). */
export function interruptsByTask(s: Snapshot): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const t of s.tasks ?? []) if (t.interrupts?.length) out[t.id] = toWire(t.interrupts) as unknown[];
  return out;
}
