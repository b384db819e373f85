/**
 * A minimal deterministic ustar writer and reader: entries sorted by path, mode 0644, owner 0,
 * mtime 0, no user or group names, so the same files always give the same bytes.
 */

const BLOCK = 512;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** Packs files (path -> bytes) into a tar archive, sorted by path. */
export function packTar(files: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const paths = [...files.keys()].sort();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (const path of paths) {
    const data = files.get(path)!;
    const header = tarHeader(path, data.length);
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    chunks.push(header, data, new Uint8Array(pad));
    total += header.length + data.length + pad;
  }
  chunks.push(new Uint8Array(BLOCK * 2));
  total += BLOCK * 2;
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

function tarHeader(path: string, size: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const bytes = enc.encode(path);
  let name = bytes;
  let prefix = new Uint8Array(0);
  if (bytes.length > 100) {
    const cut = path.lastIndexOf("/", 155);
    if (cut <= 0 || enc.encode(path.slice(cut + 1)).length > 100) throw new Error(`Cannot pack "${path}": path too long for the archive`);
    prefix = enc.encode(path.slice(0, cut));
    name = enc.encode(path.slice(cut + 1));
  }
  h.set(name, 0);
  writeOctal(h, 100, 8, 0o644);
  writeOctal(h, 108, 8, 0);
  writeOctal(h, 116, 8, 0);
  writeOctal(h, 124, 12, size);
  writeOctal(h, 136, 12, 0);
  h.fill(0x20, 148, 156);
  h[156] = 0x30;
  h.set(enc.encode("ustar\u000000"), 257);
  h.set(prefix, 345);
  let sum = 0;
  for (const b of h) sum += b;
  writeOctal(h, 148, 7, sum);
  h[155] = 0x20;
  return h;
}

function writeOctal(buf: Uint8Array, off: number, len: number, value: number): void {
  const s = value.toString(8).padStart(len - 1, "0");
  buf.set(enc.encode(s), off);
  buf[off + len - 1] = 0;
}

/** Unpacks a tar archive of regular files; throws on a malformed archive or unsafe path. */
export function unpackTar(tar: Uint8Array): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  let off = 0;
  while (off + BLOCK <= tar.length) {
    const h = tar.subarray(off, off + BLOCK);
    if (h.every((b) => b === 0)) break;
    const field = (o: number, l: number) => dec.decode(h.subarray(o, o + l)).replace(/\0.*$/s, "");
    const size = parseInt(field(124, 12).trim() || "0", 8);
    const type = String.fromCharCode(h[156] || 0x30);
    const prefix = field(345, 155);
    const path = prefix ? `${prefix}/${field(0, 100)}` : field(0, 100);
    if (Number.isNaN(size) || off + BLOCK + size > tar.length) throw new Error("truncated archive");
    if (type === "0" || type === "\0") {
      if (path.startsWith("/") || path.split("/").includes("..")) throw new Error(`unsafe path "${path}" in archive`);
      files.set(path, tar.slice(off + BLOCK, off + BLOCK + size));
    }
    off += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return files;
}
