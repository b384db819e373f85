/**
 * The `debug`, `tasks` and `checkpoints` stream payloads in the shape LangGraph's server
 * sends: checkpoint references (`checkpoint`, `parent_checkpoint`, a task's `checkpoint`)
 * instead of raw run configs, snake_case `parent_config`. Unlike LangGraph's server, the
 * configs shown keep no auth objects (`langgraph_auth_user`, its permissions) nor internal
 * (`__`) keys: a stream never carries who the caller is beyond their id.
 */

import { errorText, redact } from "../../kernel/index.ts";

type Config = { configurable?: Record<string, unknown>; [k: string]: unknown } | null | undefined;

const HIDDEN = new Set(["langgraph_auth_user", "langgraph_auth_permissions"]);

/** A checkpoint reference from a run config, or null when it names none. */
export function configToCheckpoint(config: Config, opts: { task?: boolean } = {}): Record<string, unknown> | null {
  const c = config?.configurable;
  if (!c || typeof c.thread_id !== "string") return null;
  if (!opts.task && typeof c.checkpoint_id !== "string") return null;
  return {
    thread_id: c.thread_id,
    checkpoint_id: (c.checkpoint_id as string | undefined) || null,
    checkpoint_ns: (c.checkpoint_ns as string | undefined) || "",
    checkpoint_map: (c.checkpoint_map as Record<string, unknown> | undefined) || null,
  };
}

/** A run config as a stream may show it: no callbacks, internal keys or auth objects. */
export function publicConfig(config: Config): Config {
  if (!config || typeof config !== "object" || !config.configurable || typeof config.configurable !== "object") {
    return config;
  }
  const { callbacks: _callbacks, signal: _signal, ...rest } = config;
  const configurable = Object.fromEntries(
    Object.entries(config.configurable).filter(([k]) => !k.startsWith("__") && !HIDDEN.has(k)),
  );
  return { ...rest, configurable };
}

/** A task of a debug/tasks payload: its subgraph state config becomes a `checkpoint`. */
export function debugTask(task: Record<string, unknown>): Record<string, unknown> {
  // A failed task's error, as LangGraph keeps it ({ message, name }), without stack frames, install paths or secrets.
  const error = task.error as { message?: unknown } | null | undefined;
  if (error && typeof error === "object" && typeof error.message === "string") {
    task = { ...task, error: { ...error, message: redact(errorText(error.message)) } };
  }
  const state = task.state as Config;
  const checkpoint = state && typeof state === "object" && state.configurable
    ? configToCheckpoint(state, { task: true })
    : null;
  if (!checkpoint) return task;
  const { state: _state, ...rest } = task;
  return { ...rest, checkpoint };
}

/** A debug `checkpoint` payload in LangGraph's server's shape. */
export function debugCheckpoint(payload: Record<string, unknown>): Record<string, unknown> {
  const { parentConfig, config, tasks, ...rest } = payload;
  return {
    ...rest,
    config: publicConfig(config as Config),
    parent_config: publicConfig(parentConfig as Config),
    checkpoint: configToCheckpoint(config as Config),
    parent_checkpoint: configToCheckpoint(parentConfig as Config),
    tasks: Array.isArray(tasks) ? tasks.map((t) => debugTask(t as Record<string, unknown>)) : [],
  };
}

/** One chunk of the `debug`, `tasks` or `checkpoints` LangGraph stream mode as the API streams it. */
export function debugChunk(mode: "debug" | "tasks" | "checkpoints", payload: unknown): unknown {
  if (!payload || typeof payload !== "object") return payload;
  const p = payload as Record<string, unknown>;
  if (mode === "tasks") return debugTask(p);
  if (mode === "checkpoints") return { values: p.values, metadata: p.metadata, next: p.next };
  if (p.type === "checkpoint") return { ...p, payload: debugCheckpoint(p.payload as Record<string, unknown>) };
  if (p.type === "task_result") return { ...p, payload: debugTask(p.payload as Record<string, unknown>) };
  return p;
}
