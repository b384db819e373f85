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
 *   `canceled` (a2a-task-view.ts). The answer is the artifact `answer` and the final status message.
 *
 * Approval answers: a data part `{"decisions": [...]}` (the Agent API's resume value), or
 * text `approve` / `reject: <reason>` applied to every pending action (a2a-parts.ts).
 */
import {
  type AgentCard,
  type Message,
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
import { ownerOf, type RequestClient } from "../../engine/index.ts";
import { describeUpdate, outcomeOf, startTurn } from "./turn.ts";
import { agentMessage, readParts, resumeValue, textPart } from "./a2a-parts.ts";
import {
  answerArtifact,
  CANCELED_KEY,
  stateName,
  statusMessage,
  taskOf,
  type TaskRuns,
  taskState,
  TERMINAL,
} from "./a2a-task-view.ts";

/** What the peer hears of a failure that is not its own (the server logs the details). */
export const INTERNAL_MESSAGE = "Internal error (the server logged the details)";

/** Where a message's text and context are, for errors. */
const NAMES = { message: "message.parts", thread: "message.contextId" };

export interface TaskHandlerOptions {
  deps: ServerDeps;
  assistant: Assistant;
  user: AuthUser | null;
  /** The request's client: whom an anonymous caller's usage counts for. */
  client?: RequestClient;
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
    return { id: taskId, latest: outcome.run, outcome, state: taskState(taskId, outcome) };
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
          client: this.#o.client,
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
        client: this.#o.client,
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
    const it = deps.runs.follow(run, { afterId: 2_147_483_647 });
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
      return taskOf(await this.#load(taskId), params.configuration?.historyLength);
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
    yield { payload: { $case: "task", value: taskOf(first, historyLength) } };
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
    const it = deps.runs.follow(run, { afterId: 0 });
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
            artifact: answerArtifact(end),
            append: false,
            lastChunk: true,
            metadata: undefined,
          },
        },
      };
    }
    yield status(end.state, statusMessage(end));
  }

  async getTask(params: { id: string; historyLength?: number }, _ctx: ServerCallContext): Promise<Task> {
    try {
      return taskOf(await this.#load(params.id), params.historyLength);
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
      await deps.runs.cancel(t.latest, "interrupt");
      await this.#waitEnd(t.latest);
    }
    return taskOf(await this.#load(t.id));
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
