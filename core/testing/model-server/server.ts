/**
 * A local model provider for tests, speaking the real wire protocols with scripted replies:
 * - OpenAI chat completions: `POST /openai/v1/chat/completions` (JSON or SSE, tool calls);
 * - Anthropic messages: `POST /anthropic/v1/messages` (JSON or SSE, tool_use);
 * - Gemini: `POST /gemini/v1beta/models/<model>:generateContent` and `:streamGenerateContent?alt=sse`;
 * - OpenAI embeddings: `POST /openai/v1/embeddings` (./embeddings.ts, deterministic, unscripted).
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
   * The token usage the reply reports (OpenAI protocol): default 10 in and 5 out; `null`
   * reports none, as some providers and proxies do.
   */
  usage?: { input: number; output: number; cached?: number; reasoning?: number } | null;
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
  close(): Promise<void>;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startModelServer(): Promise<ModelServer> {
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  const embedded: string[] = [];
  let counter = 0;
  const server = createServer(async (req, res) => {
    try {
      const body = JSON.parse((await readBody(req)) || "{}");
      const url = new URL(req.url ?? "/", "http://x");
      let recorded: RecordedRequest;
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
      const answer = { res, reply: reply!, req: recorded, id: `${++counter}` };
      if (recorded.protocol === "openai") replyOpenAI(answer);
      else if (recorded.protocol === "anthropic") replyAnthropic(answer);
      else replyGemini(answer);
    } catch (err) {
      sendError(res, 400, `model-server: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
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
