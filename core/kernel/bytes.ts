/** Byte-array helpers shared by the bundle, the upload receiver and the sandbox runtimes. */

/** Joins chunks into one array (`Buffer.concat` without tying these modules to `Buffer`). */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const c of chunks) size += c.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
