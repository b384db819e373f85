/**
 * A local model provider for tests, speaking the real wire protocols with scripted replies:
 * - OpenAI chat completions: `POST /openai/v1/chat/completions` (JSON or SSE, tool calls);
 * - Anthropic messages: `POST /anthropic/v1/messages` (JSON or SSE, tool_use);
 * - Gemini: `POST /gemini/v1beta/models/<model>:generateContent` and `:streamGenerateContent?alt=sse`;
 * - OpenAI embeddings: `POST /openai/v1/embeddings` (./embeddings.ts, deterministic, unscripted);
 * - `GET /_sends`: when each streamed token left the server (`sends`, below), for benchmarks in
 *   another process; `DELETE /_sends` forgets them.
 *
 * A script is a queue of replies; each request takes the first reply whose `when` matches
 * it (a substring of the prompt, or a predicate), so concurrent agents (a main agent and its
 * subagent) each get theirs. Every request is recorded, normalized across protocols, so a
 * test can assert on what the model received.
 *
 * @example
 * const server = await startModelServer();
 * server.script({ toolCalls: [{ name: "write_file", args: { file_path: "/a.md", content: "x" } }] }, { text: "done" });
 * env.OPENAI_BASE_URL = server.openaiBaseUrl;
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { normalizeAnthropic, normalizeGemini, normalizeOpenAI, type RecordedRequest } from "./normalize.ts";
import { replyEmbeddings } from "./embeddings.ts";
import { replyAnthropic, replyGemini, replyOpenAI } from "./replies.ts";

export type { RecordedRequest } from "./normalize.ts";

export interface ScriptedReply {
  text?: string;
  toolCalls?: Array<{ name: string; args: Record<string, unknown>; id?: string }>;
  /**
   * Answer with this HTTP error instead (as a provider does: `{"error": {"message"}}`);
   * `{api_key}` in the message is replaced by the key the request carried, as providers quote it.
   */
  error?: { status: number; message: string };
  /** Take this reply only for a request whose prompt contains this text (or passes this test). */
  when?: string | ((req: RecordedRequest) => boolean);
  /** Answer this many milliseconds after the request arrived, as a real model takes its time. */
  delayMs?: number;
  /**
   * Stream the text as this many chunks, one per token (in every protocol). Without `text`, the
   * text is made of this many tokens ` t0`, ` t1`, ... Without `tokens`, text streams in 3 chunks.
   */
  tokens?: number;
  /**
   * Stream one token every this many milliseconds (a fixed rate: token i is due `i * tokenIntervalMs`
   * after the first, so slow writes do not drift the schedule). Each token's send time is recorded.
   */
  tokenIntervalMs?: number;
  /**
   * The token usage the reply reports (OpenAI protocol): default 10 in and 5 out; `null`
   * reports none, as some providers and proxies do.
   */
  usage?: { input: number; output: number; cached?: number; reasoning?: number } | null;
}

/** When each text token of one streamed reply left the server. */
export interface TokenSends {
  /** The reply's id (`chatcmpl-<id>`, `msg_<id>`; `gemini-<id>`, which Gemini's replies do not carry). */
  id: string;
  /** The last message of the request (its first 200 characters), to tell concurrent runs apart. */
  prompt: string;
  /** Per token, in order: epoch milliseconds with a fraction (`performance.timeOrigin + performance.now()`). */
  sentAt: number[];
}

export interface ModelServer {
  url: string;
  openaiBaseUrl: string;
  anthropicBaseUrl: string;
  geminiBaseUrl: string;
  /** Appends replies to the script. */
  script(...replies: ScriptedReply[]): void;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Every text embedded (`/openai/v1/embeddings`), in order. */
  embedded: string[];
  /** Replies not used yet. */
  pending(): ScriptedReply[];
  /** Send times of the tokens of every streamed reply scripted with `tokens` (also `GET /_sends`). */
  sends: TokenSends[];
  close(): Promise<void>;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startModelServer(): Promise<ModelServer> {
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  const embedded: string[] = [];
  const sends: TokenSends[] = [];
  let counter = 0;
  const server = createServer(async (req, res) => {
    try {
      const body = JSON.parse((await readBody(req)) || "{}");
      const url = new URL(req.url ?? "/", "http://x");
      let recorded: RecordedRequest;
      if (url.pathname === "/_sends") {
        if (req.method === "DELETE") sends.length = 0;
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(req.method === "DELETE" ? "{}" : JSON.stringify(sends));
      }
      if (url.pathname === "/openai/v1/embeddings") {
        if (!req.headers.authorization) return sendError(res, 401, "model-server: no API key was sent");
        embedded.push(...replyEmbeddings(res, body));
        return;
      }
      if (url.pathname.startsWith("/openai/")) recorded = normalizeOpenAI(body, req.headers);
      else if (url.pathname.startsWith("/anthropic/")) recorded = normalizeAnthropic(body, req.headers);
      else if (url.pathname.startsWith("/gemini/")) recorded = normalizeGemini(body, req.headers, url);
      else return sendError(res, 404, `model-server: no route for ${url.pathname}`);
      requests.push(recorded);
      if (!recorded.apiKey) return sendError(res, 401, "model-server: no API key was sent");
      const index = queue.findIndex((r) => matches(r, recorded));
      if (index < 0) {
        return sendError(
          res,
          400,
          `model-server: no scripted reply left for this request (last message: ${
            JSON.stringify(recorded.messages.at(-1)?.content ?? "").slice(0, 200)
          })`,
        );
      }
      const [reply] = queue.splice(index, 1);
      if (reply!.delayMs) await new Promise((r) => setTimeout(r, reply!.delayMs));
      if (reply!.error) {
        return sendError(res, reply!.error.status, reply!.error.message.replaceAll("{api_key}", recorded.apiKey ?? ""));
      }
      const id = `${++counter}`;
      const pace = tokenPacer({ reply: reply!, req: recorded, id, sends, res });
      const answer = { res, reply: reply!, req: recorded, id, pace };
      if (recorded.protocol === "openai") await replyOpenAI(answer);
      else if (recorded.protocol === "anthropic") await replyAnthropic(answer);
      else await replyGemini(answer);
    } catch (err) {
      sendError(res, 400, `model-server: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  // Idle keep-alive connections stay open until the client closes them, as a provider's do for
  // longer than any client keeps one idle. With Node's default (closed after 5 s idle, announced
  // as `Keep-Alive: timeout=5`), a client (undici, fetch) that takes an idle connection from its
  // pool when the server is closing it gets "other side closed": under load (a busy event loop
  // fires the client's idle timer late), runs failed with the OpenAI client's "Connection error.".
  // Without the announcement, clients close idle connections after their own timeout (undici: 4 s).
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openaiBaseUrl: `${url}/openai/v1`,
    anthropicBaseUrl: `${url}/anthropic`,
    geminiBaseUrl: `${url}/gemini`,
    script: (...replies) => void queue.push(...replies),
    requests,
    embedded,
    pending: () => [...queue],
    sends,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Waits until the next token of a streamed reply is due (`tokenIntervalMs`), then records when it left:
 * call it just before writing each text token. Replies without `tokens` are neither paced nor recorded,
 * and neither are the tokens after the client went away (what is left is written to nobody at once).
 */
function tokenPacer(
  { reply, req, id, sends, res }: {
    reply: ScriptedReply;
    req: RecordedRequest;
    id: string;
    sends: TokenSends[];
    res: ServerResponse;
  },
): () => Promise<void> {
  if (!reply.tokens || !req.stream) return () => Promise.resolve();
  const interval = reply.tokenIntervalMs ?? 0;
  const prompt = req.messages.at(-1)?.content.slice(0, 200) ?? "";
  const ids = { openai: `chatcmpl-${id}`, anthropic: `msg_${id}`, gemini: `gemini-${id}` };
  const record: TokenSends = { id: ids[req.protocol], prompt, sentAt: [] };
  sends.push(record);
  let start = 0;
  return async () => {
    if (res.destroyed) return;
    const now = performance.now();
    if (record.sentAt.length === 0) start = now;
    const due = start + record.sentAt.length * interval;
    if (due > now) await new Promise((r) => setTimeout(r, due - now));
    record.sentAt.push(performance.timeOrigin + performance.now());
  };
}

function matches(reply: ScriptedReply, req: RecordedRequest): boolean {
  if (!reply.when) return true;
  if (typeof reply.when === "function") return reply.when(req);
  return req.system.includes(reply.when) || req.messages.some((m) => m.content.includes(reply.when as string));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type: "invalid_request_error", code: status } }));
}
