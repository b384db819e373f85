/**
 * One streaming run at a time: start (any input, config, stream modes, from a checkpoint or
 * with a resume command), join a running run, cancel. Events are buffered and flushed once a
 * frame, so thousands of streamed tokens do not re-render the page thousands of times.
 */
import { useCallback, useRef, useState } from "react";
import type { Client, StreamMode } from "@langchain/langgraph-sdk";
import { errorMessage } from "./connection.ts";

export interface StreamEvent {
  seq: number;
  event: string;
  data: unknown;
}

export interface StartOptions {
  threadId: string;
  assistantId: string;
  input?: unknown;
  config?: Record<string, unknown>;
  streamModes: string[];
  checkpointId?: string;
  resume?: unknown;
  multitaskStrategy?: "reject" | "interrupt" | "rollback" | "enqueue";
}

export interface RunStream {
  events: StreamEvent[];
  running: boolean;
  threadId: string | null;
  runId: string | null;
  currentNode: string | null;
  error: string | null;
  start(o: StartOptions): Promise<void>;
  join(threadId: string, runId: string): Promise<void>;
  cancel(): Promise<void>;
  clear(): void;
}

/** The graph node an event comes from, when it says. */
export function nodeOf(event: string, data: unknown): string | null {
  if (event.startsWith("messages") && Array.isArray(data)) {
    const meta = data[1] as { langgraph_node?: string } | undefined;
    return meta?.langgraph_node ?? null;
  }
  if (event.startsWith("tasks") && data && typeof data === "object" && "name" in data) {
    return "result" in data || "error" in data ? null : String((data as { name: string }).name);
  }
  if (event.startsWith("updates") && data && typeof data === "object") return Object.keys(data)[0] ?? null;
  return null;
}

export function useRunStream(client: Client): RunStream {
  const [events, setEvents] = useState<StreamEvent[]>([]);
  const [running, setRunning] = useState(false);
  const [ids, setIds] = useState<{ threadId: string | null; runId: string | null }>({ threadId: null, runId: null });
  const [currentNode, setCurrentNode] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const buffer = useRef<StreamEvent[]>([]);
  const frame = useRef(0);
  const seq = useRef(0);
  const abort = useRef<AbortController | null>(null);

  const flush = () => {
    frame.current = 0;
    const batch = buffer.current;
    buffer.current = [];
    if (batch.length) setEvents((prev) => prev.concat(batch));
  };
  const push = (event: string, data: unknown) => {
    buffer.current.push({ seq: seq.current++, event, data });
    const node = nodeOf(event, data);
    if (node) setCurrentNode(node);
    if (event === "metadata" && data && typeof data === "object" && "run_id" in data) {
      setIds((p) => ({ ...p, runId: String((data as { run_id: string }).run_id) }));
    }
    frame.current ||= requestAnimationFrame(flush);
  };

  const consume = useCallback(async (threadId: string, open: (signal: AbortSignal) => AsyncIterable<{ event: string; data: unknown }>) => {
    abort.current?.abort();
    const ctl = new AbortController();
    abort.current = ctl;
    buffer.current = [];
    seq.current = 0;
    setEvents([]);
    setError(null);
    setCurrentNode(null);
    setRunning(true);
    setIds({ threadId, runId: null });
    try {
      for await (const part of open(ctl.signal)) push(part.event, part.data);
    } catch (err) {
      if (!ctl.signal.aborted) setError(errorMessage(err));
    } finally {
      if (abort.current === ctl) {
        cancelAnimationFrame(frame.current);
        flush();
        setRunning(false);
        setCurrentNode(null);
      }
    }
  }, [client]);

  const start = useCallback((o: StartOptions) =>
    consume(o.threadId, (signal) =>
      client.runs.stream(o.threadId, o.assistantId, {
        input: o.resume === undefined ? (o.input as Record<string, unknown> | null) : undefined,
        command: o.resume === undefined ? undefined : { resume: o.resume },
        config: o.config,
        streamMode: o.streamModes as StreamMode[],
        streamSubgraphs: true,
        checkpointId: o.checkpointId,
        multitaskStrategy: o.multitaskStrategy,
        signal,
        onRunCreated: ({ run_id }) => setIds({ threadId: o.threadId, runId: run_id }),
      }) as AsyncIterable<{ event: string; data: unknown }>), [client, consume]);

  const join = useCallback(async (threadId: string, runId: string) => {
    await consume(threadId, (signal) => client.runs.joinStream(threadId, runId, { signal }) as AsyncIterable<{ event: string; data: unknown }>);
    setIds({ threadId, runId });
  }, [client, consume]);

  const cancel = useCallback(async () => {
    if (ids.threadId && ids.runId) {
      try {
        await client.runs.cancel(ids.threadId, ids.runId);
      } catch (err) {
        setError(errorMessage(err));
      }
    }
  }, [client, ids]);

  const clear = () => setEvents([]);
  return { events, running, ...ids, currentNode, error, start, join, cancel, clear };
}
