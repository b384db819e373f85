/**
 * A minimal deterministic ustar writer and reader: entries sorted by path, mode 0644, owner 0,
 * mtime 0, no user or group names, so the same files always give the same bytes.
 */
import { concatBytes } from "../kernel/index.ts";

const BLOCK = 512;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** Packs files (path -> bytes) into a tar archive, sorted by path. */
export function packTar(files: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const paths = [...files.keys()].sort();
  const chunks: Uint8Array[] = [];
  for (const path of paths) {
    const data = files.get(path)!;
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    chunks.push(tarHeader(path, data.length), data, new Uint8Array(pad));
  }
  chunks.push(new Uint8Array(BLOCK * 2));
  return concatBytes(chunks);
}

/** Whether `path` fits a ustar header (name up to 100 bytes, or a prefix up to 155 bytes cut at a "/"). */
export function fitsTar(path: string): boolean {
  const bytes = enc.encode(path);
  if (bytes.length <= 100) return true;
  const cut = path.lastIndexOf("/", 155);
  return cut > 0 && enc.encode(path.slice(0, cut)).length <= 155 && enc.encode(path.slice(cut + 1)).length <= 100;
}

function tarHeader(path: string, size: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const bytes = enc.encode(path);
  let name = bytes;
  let prefix = new Uint8Array(0);
  if (bytes.length > 100) {
    const cut = path.lastIndexOf("/", 155);
    if (!fitsTar(path)) throw new Error(`Cannot pack "${path}": path too long for the archive`);
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

/** A header's entry: what the reader needs, after the checks every archive gets. */
interface TarEntry {
  path: string;
  size: number;
  /** `file` or `directory`; every other kind (links, devices, FIFOs, extended headers) is refused. */
  kind: "file" | "directory";
}

const REFUSED_TYPES: Record<string, string> = {
  "1": "a hard link",
  "2": "a symbolic link",
  "3": "a character device",
  "4": "a block device",
  "6": "a FIFO",
  "7": "a contiguous file",
  x: "a pax extended header",
  g: "a pax global header",
  L: "a GNU long name",
  K: "a GNU long link name",
};

/**
 * Reads and checks one header block: checksum, size, entry type (regular files and
 * directories only) and path (relative, no `..`). Throws a message naming the entry.
 */
function readHeader(h: Uint8Array): TarEntry {
  const field = (o: number, l: number) => dec.decode(h.subarray(o, o + l)).replace(/\0.*$/s, "");
  const prefix = field(345, 155);
  const name = field(0, 100);
  const path = prefix ? `${prefix}/${name}` : name;
  const shown = JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}...` : path);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  const stored = parseInt(field(148, 8).trim() || "x", 8);
  if (stored !== sum) throw new Error(`entry ${shown} has a damaged header (checksum mismatch)`);
  const sizeField = field(124, 12).trim();
  if (!/^[0-7]*$/.test(sizeField) || h[124]! & 0x80) throw new Error(`entry ${shown} has an invalid size`);
  const size = parseInt(sizeField || "0", 8);
  const type = String.fromCharCode(h[156] || 0x30);
  const refused = REFUSED_TYPES[type];
  if (refused) {
    const link = field(157, 100);
    throw new Error(
      `entry ${shown} is ${refused}${
        link && (type === "1" || type === "2") ? ` to ${JSON.stringify(link)}` : ""
      }; only regular files are allowed`,
    );
  }
  if (type !== "0" && type !== "5") {
    throw new Error(`entry ${shown} has the unsupported type "${type}"; only regular files are allowed`);
  }
  const segments = path.split("/");
  if (!path || path.startsWith("/") || /^[A-Za-z]:/.test(path) || segments.includes("..") || path.includes("\\")) {
    throw new Error(`unsafe path ${shown} in archive (absolute, "..", or empty)`);
  }
  return { path, size, kind: type === "5" ? "directory" : "file" };
}

/** Unpacks a tar archive of regular files; throws on a malformed archive, an unsafe path or entry, or a duplicate. */
export function unpackTar(tar: Uint8Array): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  let off = 0;
  let ended = false;
  while (off + BLOCK <= tar.length) {
    const h = tar.subarray(off, off + BLOCK);
    if (h.every((b) => b === 0)) {
      ended = true;
      break;
    }
    const entry = readHeader(h);
    if (off + BLOCK + entry.size > tar.length) throw new Error("truncated archive");
    if (entry.kind === "file") {
      if (files.has(entry.path)) throw new Error(`entry ${JSON.stringify(entry.path)} appears twice`);
      files.set(entry.path, tar.slice(off + BLOCK, off + BLOCK + entry.size));
    }
    off += BLOCK + Math.ceil(entry.size / BLOCK) * BLOCK;
  }
  if (!ended) throw new Error("truncated archive (no end-of-archive marker)");
  return files;
}

/** Why a {@link TarScanner} stopped: a limit (413) or a malformed or unsafe archive (422). */
export class TarRefused extends Error {
  readonly reason: "entries" | "bytes" | "invalid";
  constructor(reason: "entries" | "bytes" | "invalid", message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Checks a tar stream chunk by chunk, keeping only the current header: every entry as
 * {@link unpackTar} would (regular files only, safe paths, no duplicates), at most
 * `maxEntries` entries and `maxBytes` bytes, and a complete archive at {@link finish}.
 *
 * @example
 * const scan = new TarScanner({ maxBytes: 512 << 20, maxEntries: 10_000 });
 * for await (const chunk of gunzipped) scan.push(chunk);
 * const { entries, bytes } = scan.finish();
 */
export class TarScanner {
  private readonly limits: { maxBytes: number; maxEntries: number };
  private readonly header = new Uint8Array(BLOCK);
  private filled = 0;
  /** Bytes of the current entry's data and padding still to skip. */
  private skip = 0;
  private entries = 0;
  private bytes = 0;
  private ended = false;
  private readonly seen = new Set<string>();

  constructor(limits: { maxBytes: number; maxEntries: number }) {
    this.limits = limits;
  }

  push(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limits.maxBytes) {
      throw new TarRefused("bytes", `it unpacks to more than ${this.limits.maxBytes} bytes`);
    }
    let off = 0;
    while (off < chunk.length && !this.ended) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - off);
        this.skip -= n;
        off += n;
        continue;
      }
      const n = Math.min(BLOCK - this.filled, chunk.length - off);
      this.header.set(chunk.subarray(off, off + n), this.filled);
      this.filled += n;
      off += n;
      if (this.filled < BLOCK) break;
      this.filled = 0;
      if (this.header.every((b) => b === 0)) {
        this.ended = true;
        break;
      }
      let entry: TarEntry;
      try {
        entry = readHeader(this.header);
      } catch (err) {
        throw new TarRefused("invalid", (err as Error).message);
      }
      if (++this.entries > this.limits.maxEntries) {
        throw new TarRefused("entries", `it holds more than ${this.limits.maxEntries} entries`);
      }
      if (this.seen.has(entry.path)) {
        throw new TarRefused("invalid", `entry ${JSON.stringify(entry.path)} appears twice`);
      }
      this.seen.add(entry.path);
      this.skip = Math.ceil(entry.size / BLOCK) * BLOCK;
    }
  }

  /** Ends the stream: throws when it stopped inside an entry or before the end-of-archive marker. */
  finish(): { entries: number; bytes: number } {
    if (!this.ended) {
      throw new TarRefused("invalid", "the archive is truncated (it ends before its end-of-archive marker)");
    }
    return { entries: this.entries, bytes: this.bytes };
  }
}
