/**
 * Server-sent events for runs: `metadata` first, then the run's events with integer ids,
 * resumable with `Last-Event-ID`. The stream pulls from the broker at the client's pace, so
 * a slow client never slows the run, and a dropped one loses nothing: every event is in the
 * durable log for the rejoin. The events' data is redacted at its source (the run's emit), so the
 * response skips the second pass of ./redact-responses.ts; what this module writes itself (event
 * names, its errors) it redacts here.
 */
import { redact } from "../../kernel/index.ts";
import type { RunEvent } from "../../storage/index.ts";
import { REDACTED_AT_SOURCE } from "./redact-responses.ts";

const encoder = new TextEncoder();

/**
 * One SSE frame. Run events are numbered from 1 in storage; on the wire their ids count from
 * 0, as LangGraph's server numbers them, so a client's `Last-Event-ID` means the same on both.
 */
export function sseFrame(e: { id?: number; event: string; data: string }): Uint8Array {
  return encoder.encode(`${e.id !== undefined ? `id: ${e.id - 1}\n` : ""}event: ${e.event}\ndata: ${e.data}\n\n`);
}

export interface SseOptions {
  headers?: Record<string, string>;
  /** Called when the client goes away before the stream ended. */
  onDisconnect?: () => void;
  /** Only these stream modes (plus `metadata`, `error`); all when absent. */
  modes?: string[];
  heartbeatMs?: number;
}

/** An SSE response following `events` until it ends. */
export function sseResponse(events: AsyncGenerator<RunEvent, unknown>, opts: SseOptions = {}): Response {
  let finished = false;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const wanted = opts.modes?.length
    ? new Set([...opts.modes.map((m) => (m === "messages-tuple" ? "messages" : m)), "metadata", "error"])
    : null;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (opts.heartbeatMs) {
        heartbeat = setInterval(() => {
          try {
            controller.enqueue(encoder.encode(": heartbeat\n\n"));
          } catch { /* closed */ }
        }, opts.heartbeatMs);
        (heartbeat as { unref?: () => void }).unref?.();
      }
    },
    async pull(controller) {
      try {
        while (true) {
          const next = await events.next();
          if (next.done) {
            finished = true;
            if (heartbeat) clearInterval(heartbeat);
            controller.close();
            return;
          }
          const base = next.value.event.split("|")[0]!.split("/")[0]!;
          if (wanted && !wanted.has(base)) continue;
          controller.enqueue(sseFrame({ ...next.value, event: redact(next.value.event) }));
          return;
        }
      } catch (err) {
        finished = true;
        if (heartbeat) clearInterval(heartbeat);
        controller.enqueue(
          sseFrame({
            event: "error",
            data: redact(
              JSON.stringify({ error: "StreamError", message: err instanceof Error ? err.message : String(err) }),
            ),
          }),
        );
        controller.close();
      }
    },
    async cancel() {
      if (heartbeat) clearInterval(heartbeat);
      if (!finished) opts.onDisconnect?.();
      await events.return(undefined);
    },
  });
  return new Response(body, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
      [REDACTED_AT_SOURCE]: "1",
      ...opts.headers,
    },
  });
}

/**
 * The stored id after which a rejoin resumes, from a `Last-Event-ID` header: the wire id of
 * the last event seen (0 for the first; -1, absent or not an integer: from the start).
 */
export function lastEventId(header: string | undefined | null): number {
  if (header === undefined || header === null || header.trim() === "") return 0;
  const n = Number(header);
  return Number.isInteger(n) && n >= 0 ? n + 1 : 0;
}
