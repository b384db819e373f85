/**
 * An exclusive lock on an embedded database folder, held by one process at a time: a file
 * beside the folder (`<dir>.lock`, so restoring a template into the empty folder still
 * works) holding the owner's process id. Two processes on one embedded database would each
 * keep their own copy in memory and lose the other's writes, so the second one is refused.
 * A lock whose owner is gone (it crashed, or was killed) is taken over.
 *
 * @example
 * const lock = lockDataDir(".agentcli/db"); // throws DataDirLockedError when another process holds it
 * try { ... } finally { lock.release(); }
 */
import {
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, resolve } from "node:path";
import process from "node:process";
import { AgentcliError } from "../kernel/index.ts";

export interface DirLock {
  /** The lock file. */
  readonly file: string;
  /** Gives the lock up (once; later calls do nothing). */
  release(): void;
}

/** The folder is locked by another live process (`pid`). A user error (409). */
export class DataDirLockedError extends AgentcliError {
  readonly dir: string;
  readonly pid: number;

  constructor(dir: string, pid: number, hint?: string) {
    super("CONFLICT", {
      message: `Cannot open the embedded database in "${dir}": another agentcli process (pid ${pid}) is running on it`,
      hint: hint ??
        `Stop that process first (pid ${pid}), or give this one another data folder (--data-dir <dir>). Two servers on one embedded database would lose each other's data; to run several, set DATABASE_URL to a PostgreSQL database.`,
    });
    this.dir = dir;
    this.pid = pid;
  }
}

/** Lock files this process holds (two opens in one process conflict too). */
const held = new Set<string>();

/** Whether a process with this id is running (on this machine). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, run by another user.
    return (err as { code?: string }).code === "EPERM";
  }
}

function readPid(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The live process, other than this one, holding the lock on `dir`; null when it is free (or stale). */
export function lockHolder(dir: string): number | null {
  const pid = readPid(`${resolve(dir)}.lock`);
  return pid !== null && pid !== process.pid && processAlive(pid) ? pid : null;
}

function unique(file: string, what: string): string {
  return `${file}.${process.pid}.${crypto.randomUUID().slice(0, 8)}.${what}`;
}

/**
 * Takes the lock on `dir` for this process, or throws {@link DataDirLockedError} naming the
 * process that holds it. The lock file appears whole (written aside, then hard-linked into
 * place), so a reader never sees it empty.
 */
export function lockDataDir(dir: string): DirLock {
  const abs = resolve(dir);
  const file = `${abs}.lock`;
  mkdirSync(dirname(file), { recursive: true });
  let holder: number | null = null;
  for (let attempt = 0; attempt < 5; attempt++) {
    const tmp = unique(file, "new");
    const fd = openSync(tmp, "wx");
    try {
      writeSync(fd, String(process.pid));
    } finally {
      closeSync(fd);
    }
    let linked = false;
    try {
      linkSync(tmp, file);
      linked = true;
    } catch (err) {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
    } finally {
      try {
        unlinkSync(tmp);
      } catch { /* gone already */ }
    }
    if (linked) {
      held.add(file);
      let released = false;
      return {
        file,
        release() {
          if (released) return;
          released = true;
          held.delete(file);
          // Only our own lock: never one a later owner took over.
          if (readPid(file) === process.pid) {
            try {
              unlinkSync(file);
            } catch { /* gone already */ }
          }
        },
      };
    }
    holder = readPid(file);
    if (holder === null && !existsSync(file)) continue; // released meanwhile: try again
    // Unreadable (not written by this code), its owner gone, or a leftover of this very
    // process id (a restarted container often gets the same one): stale.
    const stale = holder === null || (holder === process.pid ? !held.has(file) : !processAlive(holder));
    if (!stale) throw new DataDirLockedError(abs, holder!);
    // Take the stale lock over: move it aside; when another process replaced it meanwhile
    // (what was moved is not the stale owner's), put that one back.
    const aside = unique(file, "stale");
    try {
      renameSync(file, aside);
    } catch {
      continue;
    }
    if (readPid(aside) !== holder) {
      try {
        linkSync(aside, file);
      } catch { /* a third process took it: the next round reads it */ }
    }
    try {
      unlinkSync(aside);
    } catch { /* gone already */ }
  }
  throw new DataDirLockedError(abs, holder ?? 0);
}
