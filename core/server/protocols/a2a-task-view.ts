/**
 * An A2A task as the peer sees it, from the runs it spans: its state (from the latest run's
 * outcome), its status message, its answer artifact and its history.
 *
 * - states: pending run `submitted`, running `working`, success `completed` (or
 *   `input-required` while the thread waits on an approval gate, `canceled` once the task was
 *   cancelled there), interrupted `canceled`, anything else `failed`.
 *
 * @example
 * const state = taskState(taskId, outcome);
 * const task = taskOf({ id: taskId, latest: outcome.run, outcome, state }, historyLength);
 */
import { type Artifact, type Message, Role, type Task, TaskState } from "@a2a-js/sdk";
import type { Run } from "../../storage/index.ts";
import { agentMessage, dataPart, textPart } from "./a2a-parts.ts";
import { contentText, describeInterrupts, type TurnOutcome } from "./turn.ts";

/** States a task never leaves. */
export const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
/** The thread metadata key that marks the input-required task cancelled at its gate (the thread keeps its interrupt). */
export const CANCELED_KEY = "a2a_canceled_task_id";

/** A task: its id (the run it started with), the run it is at, that run's outcome and the task's state. */
export interface TaskRuns {
  id: string;
  latest: Run;
  outcome: TurnOutcome;
  state: TaskState;
}

/** The task state of a run outcome (`taskId`: a task cancelled at its approval gate is `canceled`). */
export function taskState(taskId: string, o: TurnOutcome): TaskState {
  switch (o.status) {
    case "pending":
      return TaskState.TASK_STATE_SUBMITTED;
    case "running":
      return TaskState.TASK_STATE_WORKING;
    case "success":
      if (!o.interrupts.length) return TaskState.TASK_STATE_COMPLETED;
      return (o.thread?.metadata as Record<string, unknown> | undefined)?.[CANCELED_KEY] === taskId
        ? TaskState.TASK_STATE_CANCELED
        : TaskState.TASK_STATE_INPUT_REQUIRED;
    case "interrupted":
      return TaskState.TASK_STATE_CANCELED;
    default:
      return TaskState.TASK_STATE_FAILED;
  }
}

/** The message of a task's status: the answer, the approval asked for, or the failure. */
export function statusMessage(t: TaskRuns): Message | undefined {
  const ctx = t.latest.thread_id;
  switch (t.state) {
    case TaskState.TASK_STATE_COMPLETED:
      return agentMessage(t.id, ctx, [textPart(t.outcome.answer)]);
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return agentMessage(t.id, ctx, [
        textPart(
          `${
            describeInterrupts(t.outcome.interrupts)
          }\nReply in this task with "approve" or "reject: <reason>" (or a data part {"decisions": [...]}).`,
        ),
        dataPart({ interrupts: t.outcome.interrupts }),
      ]);
    case TaskState.TASK_STATE_FAILED:
      return agentMessage(t.id, ctx, [textPart(t.outcome.error ?? `The run ended "${t.outcome.status}"`)]);
    default:
      return undefined;
  }
}

/** The task's answer (the final message of its latest run). */
export function answerArtifact(t: TaskRuns): Artifact {
  return {
    artifactId: `answer-${t.latest.run_id}`,
    name: "answer",
    description: "The agent's final answer.",
    parts: [textPart(t.outcome.answer)],
    metadata: undefined,
    extensions: [],
  };
}

/** The task as the peer sees it; `historyLength` keeps the last messages of its thread (0: none). */
export function taskOf(t: TaskRuns, historyLength?: number): Task {
  const ctx = t.latest.thread_id;
  const messages = ((t.outcome.thread?.values as { messages?: unknown[] } | null)?.messages ?? []) as Array<
    { type?: string; id?: string; content?: unknown }
  >;
  let history: Message[] = messages
    .filter((m) => (m.type === "human" || m.type === "ai") && contentText(m.content))
    .map((m) => ({
      messageId: m.id ?? crypto.randomUUID(),
      contextId: ctx,
      taskId: t.id,
      role: m.type === "human" ? Role.ROLE_USER : Role.ROLE_AGENT,
      parts: [textPart(contentText(m.content))],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    }));
  if (historyLength !== undefined) history = historyLength > 0 ? history.slice(-historyLength) : [];
  return {
    id: t.id,
    contextId: ctx,
    status: { state: t.state, message: statusMessage(t), timestamp: t.latest.updated_at },
    artifacts: t.state === TaskState.TASK_STATE_COMPLETED ? [answerArtifact(t)] : [],
    history,
    metadata: { assistant_id: t.latest.assistant_id, run_id: t.latest.run_id },
  };
}

/** A task state in the spec's words (`input-required`, `completed`, ...). */
export function stateName(s: TaskState): string {
  return TaskState[s]?.replace("TASK_STATE_", "").toLowerCase().replace("_", "-") ?? String(s);
}
