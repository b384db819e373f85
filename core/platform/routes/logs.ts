/**
 * Build and deploy logs of a revision (extension):
 * `GET /v2/deployments/{id}/revisions/{rid}/logs?kind=build|deploy&after=<line id>`
 * - JSON (default): `{logs: [{id, kind, message, at}], after, status, status_message}`;
 *   with `wait=<seconds>` (up to 30) it long-polls until a line arrives, the revision ends or
 *   the time is up (then `logs` is empty and `after` unchanged).
 * - `follow=true` or `Accept: text/event-stream`: Server-Sent Events, `log` events with a
 *   line each and `status` events on each change; the stream ends once the revision is in a
 *   final state and every line has been sent.
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { SqlDriver } from "../../storage/index.ts";
import { invalidField } from "../api/api-error.ts";
import { type RevisionRow, TERMINAL_REVISION_STATUSES } from "../api/resources.ts";
import { getRevision, readLogs } from "../store/revisions.ts";

const POLL_MS = 150;
/** The longest long-poll (`wait=`); longer asks are cut to it. */
const MAX_WAIT_S = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function streamLogs(c: Context, sql: SqlDriver, revision: RevisionRow): Promise<Response> {
  const kind = c.req.query("kind") || undefined;
  if (kind && kind !== "build" && kind !== "deploy") {
    throw invalidField(["query", "kind"], `must be "build" or "deploy"`, "enum");
  }
  const afterRaw = c.req.query("after") ?? "0";
  if (!/^\d+$/.test(afterRaw) || !Number.isSafeInteger(Number(afterRaw))) {
    throw invalidField(["query", "after"], "must be a log line id (an integer >= 0)", "int_parsing");
  }
  let after = Number(afterRaw);
  const follow = c.req.query("follow") === "true" || (c.req.header("accept") ?? "").includes("text/event-stream");
  if (!follow) {
    const waitRaw = c.req.query("wait") ?? "0";
    if (!/^\d+(\.\d+)?$/.test(waitRaw)) {
      throw invalidField(["query", "wait"], `must be a number of seconds (0 to ${MAX_WAIT_S})`, "float_parsing");
    }
    const deadline = Date.now() + Math.min(Number(waitRaw), MAX_WAIT_S) * 1000;
    const gone = c.req.raw.signal;
    let logs = await readLogs(sql, revision.id, { after, kind });
    let current = revision;
    while (!logs.length && Date.now() < deadline && !gone.aborted && !TERMINAL_REVISION_STATUSES.has(current.status)) {
      await sleep(POLL_MS);
      logs = await readLogs(sql, revision.id, { after, kind });
      current = (await getRevision(sql, revision.deployment_id, revision.id)) ?? current;
    }
    return c.json({
      logs,
      after: logs.at(-1)?.id ?? after,
      status: current.status,
      status_message: current.status_message,
    });
  }
  return streamSSE(c, async (stream) => {
    let lastStatus = "";
    let aborted = false;
    stream.onAbort(() => {
      aborted = true;
    });
    while (!aborted) {
      const current = (await getRevision(sql, revision.deployment_id, revision.id)) ?? revision;
      const lines = await readLogs(sql, revision.id, { after, kind });
      for (const line of lines) {
        await stream.writeSSE({ event: "log", id: String(line.id), data: JSON.stringify(line) });
        after = line.id;
      }
      if (current.status !== lastStatus) {
        lastStatus = current.status;
        await stream.writeSSE({
          event: "status",
          data: JSON.stringify({ status: current.status, status_message: current.status_message }),
        });
      }
      if (TERMINAL_REVISION_STATUSES.has(current.status) && !lines.length) break;
      await sleep(POLL_MS);
    }
  });
}
