/**
 * Reads a 64-bit Mach-O executable's header and load commands, and removes its code signature,
 * as `codesign --remove-signature` does on a Mac: the official macOS Node binary is signed, and
 * injecting the SEA blob invalidates that signature (Node's SEA guide removes it first, then
 * signs again). No npm package signs Mach-O ad hoc from Linux, so the executable leaves the
 * build unsigned: Intel Macs (and Rosetta 2) run it as it is; `codesign --sign - <file>` on a
 * Mac signs it ad hoc, which Apple-silicon native executables need (docs/executables.md).
 *
 * @example
 * const info = readMachO(readFileSync("dist/agentcli-darwin-x64"));
 * // { cpu: "x86_64", fileType: "execute", segments: ["__PAGEZERO", ..., "NODE_SEA"], signed: false }
 */
import { readFileSync, writeFileSync } from "node:fs";

const MH_MAGIC_64 = 0xfeedfacf;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const HEADER_SIZE = 32;
const CPU: Record<number, string> = { 0x01000007: "x86_64", 0x0100000c: "arm64" };
const FILE_TYPE: Record<number, string> = { 1: "object", 2: "execute", 6: "dylib" };

/** What the checks of a macOS executable look at. */
export interface MachOInfo {
  cpu: string;
  fileType: string;
  /** Segment names, in load-command order (the SEA blob is in segment `NODE_SEA`). */
  segments: string[];
  /** Whether it has an LC_CODE_SIGNATURE load command. */
  signed: boolean;
}

interface LoadCommand {
  cmd: number;
  offset: number;
  size: number;
}

function header(
  buf: Buffer,
): { cputype: number; filetype: number; ncmds: number; sizeofcmds: number; commands: LoadCommand[] } {
  if (buf.length < HEADER_SIZE || buf.readUInt32LE(0) !== MH_MAGIC_64) {
    throw new Error("not a 64-bit little-endian Mach-O file");
  }
  const ncmds = buf.readUInt32LE(16);
  const sizeofcmds = buf.readUInt32LE(20);
  const commands: LoadCommand[] = [];
  for (let i = 0, offset = HEADER_SIZE; i < ncmds; i++) {
    const size = buf.readUInt32LE(offset + 4);
    if (size < 8 || offset + size > HEADER_SIZE + sizeofcmds) {
      throw new Error(`Mach-O load command ${i} runs past the load commands`);
    }
    commands.push({ cmd: buf.readUInt32LE(offset), offset, size });
    offset += size;
  }
  return { cputype: buf.readUInt32LE(4), filetype: buf.readUInt32LE(12), ncmds, sizeofcmds, commands };
}

const segmentName = (buf: Buffer, c: LoadCommand) =>
  buf.subarray(c.offset + 8, c.offset + 24).toString("latin1").replace(/\0+$/, "");

/** The header, segments and signature state of a 64-bit Mach-O file. */
export function readMachO(buf: Buffer): MachOInfo {
  const h = header(buf);
  return {
    cpu: CPU[h.cputype] ?? `0x${h.cputype.toString(16)}`,
    fileType: FILE_TYPE[h.filetype] ?? String(h.filetype),
    segments: h.commands.filter((c) => c.cmd === LC_SEGMENT_64).map((c) => segmentName(buf, c)),
    signed: h.commands.some((c) => c.cmd === LC_CODE_SIGNATURE),
  };
}

/**
 * Removes the code signature of the Mach-O file at `file` in place: its load command goes,
 * and `__LINKEDIT` (the signature is its last bytes, and the file's) ends where it began.
 * Returns false when the file was not signed.
 */
export function removeSignature(file: string): boolean {
  const buf = readFileSync(file);
  const h = header(buf);
  const sig = h.commands.find((c) => c.cmd === LC_CODE_SIGNATURE);
  if (!sig) return false;
  const dataoff = buf.readUInt32LE(sig.offset + 8);
  const datasize = buf.readUInt32LE(sig.offset + 12);
  if (dataoff + datasize !== buf.length) throw new Error("the Mach-O code signature is not at the end of the file");
  const linkedit = h.commands.find((c) => c.cmd === LC_SEGMENT_64 && segmentName(buf, c) === "__LINKEDIT");
  if (!linkedit) throw new Error("the Mach-O file has no __LINKEDIT segment");
  const fileoff = Number(buf.readBigUInt64LE(linkedit.offset + 40));
  const page = h.cputype === 0x0100000c ? 0x4000 : 0x1000;
  const filesize = dataoff - fileoff;
  buf.writeBigUInt64LE(BigInt(filesize), linkedit.offset + 48);
  buf.writeBigUInt64LE(BigInt(Math.ceil(filesize / page) * page), linkedit.offset + 32);
  const end = HEADER_SIZE + h.sizeofcmds;
  buf.copy(buf, sig.offset, sig.offset + sig.size, end);
  buf.fill(0, end - sig.size, end);
  buf.writeUInt32LE(h.ncmds - 1, 16);
  buf.writeUInt32LE(h.sizeofcmds - sig.size, 20);
  writeFileSync(file, buf.subarray(0, dataoff));
  return true;
}
