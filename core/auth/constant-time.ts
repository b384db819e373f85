/**
 * Secret comparison that takes the same time whatever the inputs: both sides are hashed
 * with SHA-256 (so lengths do not leak) and the digests are compared with an XOR loop.
 * Web Crypto only, so it runs on Node and Deno alike.
 *
 * @example
 * if (!(await constantTimeEqual(given, expected))) throw unauthorized("...");
 */

const encoder = new TextEncoder();

/** True when `a` and `b` are the same string. */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  const x = new Uint8Array(da);
  const y = new Uint8Array(db);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

/** Hex SHA-256 of a string: a cache key that does not keep the secret itself. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  let out = "";
  for (const b of digest) out += b.toString(16).padStart(2, "0");
  return out;
}
