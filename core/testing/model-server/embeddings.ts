/**
 * OpenAI's embeddings wire (`POST /v1/embeddings`) for the model server: a deterministic
 * bag-of-words embedding (each lower-cased word hashed into one of 64 dimensions), so texts
 * sharing words are near each other and a test can predict the ranking. Answers `float` or
 * `base64` (little-endian float32, what the OpenAI SDK asks for by default) encodings.
 */
import { Buffer } from "node:buffer";
import type { ServerResponse } from "node:http";

export const EMBEDDING_DIMS = 64;

/** The embedding of one text. */
export function embedText(text: string): number[] {
  const v = new Array<number>(EMBEDDING_DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (const ch of word) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    v[(h >>> 0) % EMBEDDING_DIMS]! += 1;
  }
  return v;
}

/** Answers an embeddings request; returns the texts it embedded. */
export function replyEmbeddings(
  res: ServerResponse,
  body: { input?: unknown; model?: string; encoding_format?: string },
): string[] {
  const inputs = (Array.isArray(body.input) ? body.input : [body.input]).map(String);
  const data = inputs.map((text, index) => {
    const v = embedText(text);
    const embedding = body.encoding_format === "base64"
      ? Buffer.from(new Float32Array(v).buffer).toString("base64")
      : v;
    return { object: "embedding", index, embedding };
  });
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      object: "list",
      data,
      model: body.model ?? "stand-in",
      usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
    }),
  );
  return inputs;
}
