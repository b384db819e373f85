/**
 * A2A tasks over the server's runs, as the SDK's `A2ARequestHandler` (its JSON-RPC transport
 * handlers, 1.0 and 0.3, do the wire work). One handler serves one request of one caller for
 * one assistant:
 *
 * - `contextId` is a thread (a new one when absent; an unknown id creates it for the caller, as
 *   A2A lets a client choose a new contextId; another user's thread is "not found", -32602);
 * - `taskId` is the run the task started with; answering an `input-required` task (a
 *   follow-up message with its `taskId`) resumes the thread in a new run that carries
 *   `metadata.a2a_task_id`, so the task keeps its id while it spans runs;
 * - states: pending run `submitted`, running `working`, success `completed` (or
 *   `input-required` while the thread waits on an approval gate), failed `failed`, cancelled
 *   `canceled`. The answer is the artifact `answer` and the final status message.
 *
 * Approval answers: a data part `{"decisions": [...]}` (the Agent API's resume value), or
 * text `approve` / `reject: <reason>` applied to every pending action.
 */
import {
  type AgentCard,
  type Artifact,
  type Message,
  type Part,
  Role,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  TaskState,
} from "@a2a-js/sdk";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import {
  A2AError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import { AgentcliError, type AuthUser } from "../../kernel/index.ts";
import type { Assistant, Run } from "../../storage/index.ts";
import type { ServerDeps } from "../deps.ts";
import { badText } from "../http/json-guard.ts";
import { cancelRun, ownerOf } from "../../engine/index.ts";
import { contentText, describeInterrupts, describeUpdate, outcomeOf, startTurn, type TurnOutcome } from "./turn.ts";

/** What the peer hears of a failure that is not its own (the server logs the details). */
export const INTERNAL_MESSAGE = "Internal error (the server logged the details)";

/** Where a message's text and context are, for errors. */
const NAMES = { message: "message.parts", thread: "message.contextId" };
const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const CANCELED_KEY = "a2a_canceled_task_id";

interface TaskRuns {
  id: string;
  latest: Run;
  outcome: TurnOutcome;
  state: TaskState;
}

function textPart(text: string): Part {
  return { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

function dataPart(value: unknown): Part {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" };
}

function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
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
function readParts(parts: Part[]): { text: string; data: unknown[] } {
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

export interface TaskHandlerOptions {
  deps: ServerDeps;
  assistant: Assistant;
  user: AuthUser | null;
  card: AgentCard;
}

/** The A2A request handler of one caller and one assistant. */
export class AssistantTasks implements A2ARequestHandler {
  readonly #o: TaskHandlerOptions;

  constructor(o: TaskHandlerOptions) {
    this.#o = o;
  }

  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(this.#o.card);
  }

  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return Promise.reject(new UnsupportedOperationError("This agent has no extended agent card"));
  }

  /** Finds a task (a run of this assistant visible to the caller) and the run it is at. */
  async #load(taskId: string): Promise<TaskRuns> {
    const { deps, assistant, user } = this.#o;
    const bad = typeof taskId === "string" ? badText(taskId) : null;
    if (bad) throw new RequestMalformedError(`Invalid params: the task id ${bad}`);
    const first = taskId ? await deps.storage.runs.get(taskId, null, { owner: ownerOf(user) }) : null;
    if (
      !first || first.assistant_id !== assistant.assistant_id || (first.metadata as Record<string, unknown>).a2a_task_id
    ) {
      throw new TaskNotFoundError(`Task "${taskId}" not found`);
    }
    const recent = await deps.storage.runs.list(first.thread_id, { limit: 100, offset: 0 });
    const latest =
      recent.find((r) => r.run_id === taskId || (r.metadata as Record<string, unknown>).a2a_task_id === taskId) ??
        first;
    const outcome = await outcomeOf(deps, latest.run_id, latest);
    return { id: taskId, latest: outcome.run, outcome, state: this.#state(taskId, outcome) };
  }

  #state(taskId: string, o: TurnOutcome): TaskState {
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

  #statusMessage(t: TaskRuns): Message | undefined {
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

  #answerArtifact(t: TaskRuns): Artifact {
    return {
      artifactId: `answer-${t.latest.run_id}`,
      name: "answer",
      description: "The agent's final answer.",
      parts: [textPart(t.outcome.answer)],
      metadata: undefined,
      extensions: [],
    };
  }

  #task(t: TaskRuns, historyLength?: number): Task {
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
      status: { state: t.state, message: this.#statusMessage(t), timestamp: t.latest.updated_at },
      artifacts: t.state === TaskState.TASK_STATE_COMPLETED ? [this.#answerArtifact(t)] : [],
      history,
      metadata: { assistant_id: t.latest.assistant_id, run_id: t.latest.run_id },
    };
  }

  /** Starts (or resumes) the task a message asks for; returns its id and run. */
  async #start(params: SendMessageRequest): Promise<{ taskId: string; run: Run }> {
    const { deps, assistant, user } = this.#o;
    const msg = params.message;
    if (!msg || !msg.parts?.length) throw new RequestMalformedError("Cannot send the message: it has no parts");
    const answer = readParts(msg.parts);
    const multitask = (params.metadata as Record<string, unknown> | undefined)?.multitask_strategy;
    const strategy = ["reject", "interrupt", "rollback", "enqueue"].includes(multitask as string)
      ? multitask as "reject"
      : undefined;
    try {
      if (msg.taskId) {
        const t = await this.#load(msg.taskId);
        if (msg.contextId && msg.contextId !== t.latest.thread_id) {
          throw new RequestMalformedError(
            `Cannot continue task "${t.id}": it belongs to context "${t.latest.thread_id}", not "${msg.contextId}"`,
          );
        }
        if (t.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
          throw new UnsupportedOperationError(
            `Cannot continue task "${t.id}": it is ${
              stateName(t.state)
            }; only an input-required task takes a follow-up (send a new message in the same contextId instead)`,
          );
        }
        const resume = resumeValue(t.id, t.outcome.interrupts, answer);
        const run = await startTurn(deps, user, {
          assistantId: assistant.assistant_id,
          threadId: t.latest.thread_id,
          resume,
          metadata: { source: "a2a", a2a_task_id: t.id },
          multitaskStrategy: "reject",
          names: { message: "message.parts" },
        });
        return { taskId: t.id, run };
      }
      const message = [answer.text, ...answer.data.map((d) => JSON.stringify(d))].filter(Boolean).join("\n");
      if (!message.trim()) throw new RequestMalformedError("Cannot send the message: it has no text or data parts");
      const run = await startTurn(deps, user, {
        assistantId: assistant.assistant_id,
        threadId: msg.contextId || null,
        createMissingThread: true,
        message,
        metadata: { source: "a2a" },
        multitaskStrategy: strategy,
        names: NAMES,
      });
      return { taskId: run.run_id, run };
    } catch (err) {
      if (err instanceof AgentcliError) {
        if (err.status === 404 || err.status === 409) {
          throw new RequestMalformedError(`Cannot send the message: ${err.message}`);
        }
        if (err.status === 422) {
          throw new RequestMalformedError(`Cannot send the message: ${err.message}${err.hint ? ` (${err.hint})` : ""}`);
        }
        throw new UnsupportedOperationError(
          `Cannot send the message: ${err.message}${err.hint ? ` (${err.hint})` : ""}`,
        );
      }
      throw err;
    }
  }

  async #waitEnd(run: Run): Promise<void> {
    const { deps } = this.#o;
    const it = deps.broker.follow(run.run_id, {
      afterId: 2_147_483_647,
      status: async () => (await deps.storage.runs.get(run.run_id))?.status ?? null,
    });
    while (!(await it.next()).done) { /* events are not needed */ }
  }

  /** Protocol errors go to the peer as they are; anything else is logged and stays generic. */
  #hide(err: unknown): never {
    if (err instanceof A2AError) throw err;
    this.#o.deps.log.error("A2A request failed", err);
    throw new Error(INTERNAL_MESSAGE);
  }

  async sendMessage(params: SendMessageRequest, _ctx: ServerCallContext): Promise<Message | Task> {
    try {
      const { taskId, run } = await this.#start(params);
      if (!params.configuration?.returnImmediately) await this.#waitEnd(run);
      return this.#task(await this.#load(taskId), params.configuration?.historyLength);
    } catch (err) {
      this.#hide(err);
    }
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    _ctx: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      const { taskId, run } = await this.#start(params);
      yield* this.#stream(taskId, run, params.configuration?.historyLength);
    } catch (err) {
      this.#hide(err);
    }
  }

  /** The task, then `working` updates per step, then the answer artifact and the final status. */
  async *#stream(taskId: string, run: Run, historyLength?: number): AsyncGenerator<StreamResponse, void, undefined> {
    const { deps } = this.#o;
    const first = await this.#load(taskId);
    yield { payload: { $case: "task", value: this.#task(first, historyLength) } };
    const ctx = run.thread_id;
    const status = (state: TaskState, message?: Message): StreamResponse => ({
      payload: {
        $case: "statusUpdate",
        value: {
          taskId,
          contextId: ctx,
          status: { state, message, timestamp: new Date().toISOString() },
          metadata: undefined,
        },
      },
    });
    let working = first.state === TaskState.TASK_STATE_WORKING;
    const it = deps.broker.follow(run.run_id, {
      afterId: 0,
      status: async () => (await deps.storage.runs.get(run.run_id))?.status ?? null,
    });
    while (true) {
      const n = await it.next();
      if (n.done) break;
      if (!working) {
        working = true;
        yield status(TaskState.TASK_STATE_WORKING);
      }
      if (n.value.event === "updates") {
        const line = describeUpdate(JSON.parse(n.value.data) as Record<string, unknown>);
        if (line && !line.startsWith("waiting")) {
          yield status(TaskState.TASK_STATE_WORKING, agentMessage(taskId, ctx, [textPart(line)]));
        }
      }
    }
    const end = await this.#load(taskId);
    if (end.state === TaskState.TASK_STATE_COMPLETED) {
      yield {
        payload: {
          $case: "artifactUpdate",
          value: {
            taskId,
            contextId: ctx,
            artifact: this.#answerArtifact(end),
            append: false,
            lastChunk: true,
            metadata: undefined,
          },
        },
      };
    }
    yield status(end.state, this.#statusMessage(end));
  }

  async getTask(params: { id: string; historyLength?: number }, _ctx: ServerCallContext): Promise<Task> {
    try {
      return this.#task(await this.#load(params.id), params.historyLength);
    } catch (err) {
      this.#hide(err);
    }
  }

  async cancelTask(params: { id: string }, _ctx: ServerCallContext): Promise<Task> {
    try {
      return await this.#cancel(params.id);
    } catch (err) {
      this.#hide(err);
    }
  }

  async #cancel(id: string): Promise<Task> {
    const { deps } = this.#o;
    const t = await this.#load(id);
    if (TERMINAL.has(t.state)) {
      throw new TaskNotCancelableError(`Cannot cancel task "${t.id}": it is ${stateName(t.state)} already`);
    }
    if (t.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      // The thread keeps its interrupt for other clients; the task is over.
      await deps.storage.threads.patch(t.latest.thread_id, { [CANCELED_KEY]: t.id });
    } else {
      await cancelRun(deps, t.latest, "interrupt");
      await this.#waitEnd(t.latest);
    }
    return this.#task(await this.#load(t.id));
  }

  async *resubscribe(params: { id: string }, _ctx: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      const t = await this.#load(params.id);
      if (TERMINAL.has(t.state)) {
        throw new UnsupportedOperationError(`Cannot subscribe to task "${t.id}": it is ${stateName(t.state)}`);
      }
      yield* this.#stream(t.id, t.latest);
    } catch (err) {
      this.#hide(err);
    }
  }

  listTasks(): Promise<never> {
    return Promise.reject(
      new UnsupportedOperationError(
        "Listing tasks is not supported: list the runs of a context with the Agent API (GET /threads/{contextId}/runs)",
      ),
    );
  }

  createTaskPushNotificationConfig(): Promise<never> {
    return Promise.reject(
      new PushNotificationNotSupportedError("Push notifications are not supported: use message/stream or tasks/get"),
    );
  }

  getTaskPushNotificationConfig(): Promise<never> {
    return this.createTaskPushNotificationConfig();
  }

  listTaskPushNotificationConfigs(): Promise<never> {
    return this.createTaskPushNotificationConfig();
  }

  deleteTaskPushNotificationConfig(): Promise<never> {
    return this.createTaskPushNotificationConfig();
  }
}

function stateName(s: TaskState): string {
  return TaskState[s]?.replace("TASK_STATE_", "").toLowerCase().replace("_", "-") ?? String(s);
}
