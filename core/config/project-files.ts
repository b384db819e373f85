/**
 * Read access to a project directory, relative to its root, skipping dotfiles (spec 2.1:
 * "Dotfiles are skipped on upload") and collecting what goes into the bundle. Nothing is
 * dropped in silence: what cannot go into a bundle is a problem in `problems`, named by path:
 * a symbolic link that leaves the project (or reaches a dotfile such as `.env`), a broken or
 * looping link, a device, FIFO or socket (never opened: reading one can block forever), a
 * directory where a file belongs, text that is not UTF-8, and files beyond the size limit.
 */
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { join, relative, sep } from "node:path";
import { fitsTar } from "../bundle/index.ts";
import type { Diagnostic } from "../kernel/index.ts";

export type FileKind = "missing" | "file" | "directory" | "refused";

/** The default bound of a bundle's project files, in MiB (`AGENTCLI_BUNDLE_MAX_MB`). */
export const DEFAULT_BUNDLE_MAX_MB = 100;

export class ProjectFiles {
  readonly root: string;
  /** What cannot go into the bundle, each once; `loadProject` reports them with the rest. */
  readonly problems: Diagnostic[] = [];
  /** Paths shown in messages are relative to the current directory. */
  private readonly shownFrom: string;
  private readonly realRoot: string;
  private readonly maxBytes: number;
  private readonly reported = new Set<string>();
  private bundled = 0;
  private overBudget = false;

  constructor(root: string, shownFrom: string, opts: { maxBytes?: number } = {}) {
    this.root = root;
    this.shownFrom = shownFrom;
    this.maxBytes = opts.maxBytes ?? DEFAULT_BUNDLE_MAX_MB * 1024 * 1024;
    let real = root;
    try {
      real = realpathSync(root);
    } catch { /* a missing root: every path is missing */ }
    this.realRoot = real;
  }

  display(path: string): string {
    const rel = relative(this.shownFrom, join(this.root, path));
    return rel.startsWith("..") && rel.split("/").filter((s) => s === "..").length > 2
      ? join(this.root, path)
      : rel || ".";
  }

  private refuse(path: string, message: string, hint: string, line?: number): "refused" {
    if (!this.reported.has(path)) {
      this.reported.add(path);
      this.problems.push({ file: this.display(path), ...(line ? { line } : {}), message, hint });
    }
    return "refused";
  }

  /** Follows a symbolic link only inside the project (and never to a dotfile); other links are refused. */
  private stat(path: string): { kind: FileKind; stats?: Stats } {
    const abs = join(this.root, path);
    let st: Stats;
    try {
      st = lstatSync(abs);
    } catch {
      return { kind: "missing" };
    }
    if (st.isSymbolicLink()) {
      let target: string;
      try {
        target = realpathSync(abs);
        st = statSync(target);
      } catch (err) {
        const loop = (err as NodeJS.ErrnoException).code === "ELOOP";
        return {
          kind: this.refuse(
            path,
            loop ? "is a symbolic link that loops" : "is a broken symbolic link",
            "Remove the link, or point it at a file inside the project.",
          ),
        };
      }
      const inside = relative(this.realRoot, target);
      if (inside === ".." || inside.startsWith(`..${sep}`) || inside.startsWith(sep)) {
        return {
          kind: this.refuse(
            path,
            `is a symbolic link to "${target}", outside the project`,
            "Copy the file into the project instead of linking to it (a bundle carries only the project's own files).",
          ),
        };
      }
      if (inside.split(sep).some((s) => s.startsWith("."))) {
        return {
          kind: this.refuse(
            path,
            `is a symbolic link to "${inside}", a dotfile (dotfiles such as .env never go into a bundle)`,
            "Remove the link; secrets travel as deployment secrets, not as files.",
          ),
        };
      }
    }
    if (st.isDirectory()) return { kind: "directory", stats: st };
    if (st.isFile()) return { kind: "file", stats: st };
    return {
      kind: this.refuse(
        path,
        "is not a regular file (a device, FIFO or socket)",
        "Remove it from the project; only regular files and directories can be bundled.",
      ),
    };
  }

  kind(path: string): FileKind {
    return this.stat(path).kind;
  }

  exists(path: string): boolean {
    return this.kind(path) !== "missing";
  }

  isDirectory(path: string): boolean {
    return this.kind(path) === "directory";
  }

  /**
   * The bytes of a regular file, or null: missing (no problem), or refused (a problem names
   * it: a directory, a link out of the project, a special file, larger than the bundle limit,
   * unreadable).
   */
  readBytes(path: string): Uint8Array | null {
    const { kind, stats } = this.stat(path);
    if (kind === "directory") {
      this.refuse(path, "is a directory; a file is expected here", "Replace the directory with a file of that name.");
    }
    if (kind !== "file") return null;
    if (stats!.size > this.maxBytes) return this.tooLarge(path, stats!.size), null;
    // Opened without following a swapped-in link or blocking on a FIFO, and checked again once open.
    let fd: number;
    try {
      fd = openSync(join(this.root, path), fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    } catch (err) {
      return this.refuse(path, `cannot be read: ${(err as Error).message}`, "Check the file's permissions."), null;
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return this.refuse(path, "is not a regular file", "Remove it from the project."), null;
      if (st.size > this.maxBytes) return this.tooLarge(path, st.size), null;
      const out = new Uint8Array(st.size);
      let off = 0;
      while (off < out.length) {
        const n = readSync(fd, out, off, out.length - off, off);
        if (n === 0) break;
        off += n;
      }
      return off === out.length ? out : out.subarray(0, off);
    } catch (err) {
      return this.refuse(path, `cannot be read: ${(err as Error).message}`, "Check the file's permissions."), null;
    } finally {
      closeSync(fd);
    }
  }

  /** A file's UTF-8 text, or null as {@link readBytes}; text that is not UTF-8 is refused (never mangled). */
  readText(path: string): string | null {
    const bytes = this.readBytes(path);
    if (bytes === null) return null;
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      const bad = firstInvalidUtf8(bytes);
      const line = new TextDecoder().decode(bytes.subarray(0, bad)).split("\n").length;
      return this.refuse(path, "is not valid UTF-8 text", "Save the file as UTF-8.", line), null;
    }
  }

  /**
   * Reads a file that goes into the bundle and counts it against the bundle's size limit;
   * the first file over the limit is a problem that names the limit and its setting.
   */
  readForBundle(path: string): Uint8Array | null {
    if (this.overBudget) return null;
    if (!fitsTar(`project/${path}`)) {
      return this.refuse(
        path,
        "has a path too long for a bundle (at most 100 bytes per file name and 155 for its folders)",
        "Shorten the file or folder names.",
      ),
        null;
    }
    const bytes = this.readBytes(path);
    if (bytes === null) return null;
    this.bundled += bytes.length;
    if (this.bundled > this.maxBytes) {
      this.overBudget = true;
      this.tooLarge(path, bytes.length, true);
      return null;
    }
    return bytes;
  }

  private tooLarge(path: string, size: number, cumulative = false): void {
    const mib = (n: number) => `${+(n / 1024 / 1024).toFixed(1)} MiB`;
    this.refuse(
      path,
      cumulative
        ? `brings the project's files over the bundle limit of ${mib(this.maxBytes)} (this file is ${mib(size)})`
        : `is ${mib(size)}, over the bundle limit of ${mib(this.maxBytes)}`,
      "Keep large data out of the project (fetch it at run time, or put it in a sandbox image), or raise AGENTCLI_BUNDLE_MAX_MB.",
    );
  }

  /** Entries of a directory, sorted, dotfiles skipped; empty when it does not exist. Refused entries are problems, not listed. */
  list(dir: string): Array<{ name: string; isDirectory: boolean }> {
    let names: string[];
    try {
      names = readdirSync(join(this.root, dir));
    } catch {
      return [];
    }
    const out: Array<{ name: string; isDirectory: boolean }> = [];
    for (const name of names.filter((n) => !n.startsWith(".")).sort()) {
      const kind = this.kind(`${dir}/${name}`);
      if (kind === "file" || kind === "directory") out.push({ name, isDirectory: kind === "directory" });
    }
    return out;
  }

  /** Every file under `dir`, recursively, sorted, dotfiles skipped; a directory reached twice through links is a problem. */
  walk(dir: string, seen = new Set<string>()): string[] {
    let real: string;
    try {
      real = realpathSync(join(this.root, dir));
    } catch {
      return [];
    }
    if (seen.has(real)) {
      return this.refuse(dir, "is a symbolic link to a directory already included (a loop)", "Remove the link."), [];
    }
    seen.add(real);
    const out: string[] = [];
    for (const e of this.list(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) out.push(...this.walk(p, seen));
      else out.push(p);
    }
    return out;
  }
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  const dec = new TextDecoder("utf-8", { fatal: true });
  let lo = 0;
  let hi = bytes.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    try {
      dec.decode(bytes.subarray(0, mid));
      lo = mid;
    } catch {
      hi = mid;
    }
  }
  return lo;
}
