/**
 * Commands running in the control plane's sandboxes, as LangSmith's `/execute/ws` protocol
 * sees them: each has a command id (a client may choose it; executing the same id again
 * re-attaches instead of starting a second process), its output kept with byte offsets so a
 * client that lost its connection can reconnect and resume from where it was, and a session
 * that outlives the command for `ttl_seconds` (at most 10 minutes here).
 */
import { randomUUID } from "node:crypto";
import type { BoxProcess } from "./runtime.ts";

/** Output kept per command (characters); beyond it the oldest is dropped (a reconnect then resumes from what is left). */
const KEEP_BYTES = 8 * 1024 * 1024;
const MAX_TTL_MS = 600_000;
const encoder = new TextEncoder();

export type CommandEvent =
  | { type: "stdout" | "stderr"; data: string; offset: number }
  | { type: "exit"; exit_code: number }
  | { type: "error"; error_type: string; error: string };

interface Chunk {
  type: "stdout" | "stderr";
  data: string;
  offset: number;
}

export class CommandSession {
  readonly id: string;
  readonly #proc: BoxProcess;
  readonly #chunks: Chunk[] = [];
  readonly #listeners = new Set<(e: CommandEvent) => void>();
  #kept = 0;
  #end: CommandEvent | null = null;
  #idleTimer: ReturnType<typeof setTimeout> | null = null;
  readonly #idleMs: number;
  readonly #killOnDisconnect: boolean;
  readonly #onDone: (s: CommandSession) => void;

  constructor(
    opts: {
      id: string;
      proc: BoxProcess;
      timeoutSeconds: number;
      idleSeconds: number;
      killOnDisconnect: boolean;
      ttlSeconds: number;
      onDone: (s: CommandSession, ttlMs: number) => void;
    },
  ) {
    this.id = opts.id;
    this.#proc = opts.proc;
    this.#idleMs = opts.idleSeconds > 0 ? opts.idleSeconds * 1000 : 0;
    this.#killOnDisconnect = opts.killOnDisconnect;
    const ttlMs = opts.ttlSeconds < 0 ? MAX_TTL_MS : Math.min(opts.ttlSeconds * 1000, MAX_TTL_MS);
    this.#onDone = (s) => opts.onDone(s, ttlMs);
    const offsets = { stdout: 0, stderr: 0 };
    const pump = async (type: "stdout" | "stderr", stream: AsyncIterable<Uint8Array>) => {
      const decoder = new TextDecoder();
      const push = (data: string) => {
        if (!data) return;
        const chunk = { type, data, offset: offsets[type] };
        offsets[type] += encoder.encode(data).byteLength;
        this.#keep(chunk);
        this.#emit(chunk);
      };
      for await (const bytes of stream) push(decoder.decode(bytes, { stream: true }));
      push(decoder.decode());
    };
    void Promise.all([pump("stdout", opts.proc.stdout), pump("stderr", opts.proc.stderr), opts.proc.exited]).then(
      ([, , exit]) =>
        this.#finish(
          exit.timedOut
            ? { type: "error", error_type: "CommandTimeout", error: `Command timed out after ${opts.timeoutSeconds}s` }
            : { type: "exit", exit_code: exit.exitCode ?? -1 },
        ),
      (err) => this.#finish({ type: "error", error_type: "CommandError", error: (err as Error).message }),
    );
  }

  get done(): boolean {
    return this.#end !== null;
  }

  #keep(chunk: Chunk): void {
    this.#chunks.push(chunk);
    this.#kept += chunk.data.length;
    while (this.#kept > KEEP_BYTES && this.#chunks.length > 1) this.#kept -= this.#chunks.shift()!.data.length;
  }

  #emit(e: CommandEvent): void {
    for (const l of this.#listeners) l(e);
  }

  #finish(e: CommandEvent): void {
    this.#end = e;
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#emit(e);
    this.#onDone(this);
  }

  /**
   * Attaches a client: replays what it has not seen (from the offsets) and then follows
   * live output. Returns the detach function.
   */
  attach(
    listener: (e: CommandEvent) => void,
    from: { stdout: number; stderr: number } = { stdout: 0, stderr: 0 },
  ): () => void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = null;
    for (const c of this.#chunks) {
      if (c.offset >= from[c.type]) listener(c);
      else {
        // A client that saw part of a chunk resumes inside it.
        const bytes = encoder.encode(c.data);
        if (c.offset + bytes.byteLength > from[c.type]) {
          listener({
            ...c,
            data: new TextDecoder().decode(bytes.subarray(from[c.type] - c.offset)),
            offset: from[c.type],
          });
        }
      }
    }
    if (this.#end) {
      listener(this.#end);
      return () => {};
    }
    this.#listeners.add(listener);
    return () => {
      if (!this.#listeners.delete(listener) || this.#listeners.size || this.#end) return;
      if (this.#killOnDisconnect) this.kill();
      else if (this.#idleMs) this.#idleTimer = setTimeout(() => this.kill(), this.#idleMs);
    };
  }

  kill(): void {
    this.#proc.kill();
  }
}

/** The command sessions of one control-plane process, by sandbox and command id. */
export class CommandSessions {
  readonly #sessions = new Map<string, CommandSession>();

  get(sandboxId: string, commandId: string): CommandSession | undefined {
    return this.#sessions.get(`${sandboxId}/${commandId}`);
  }

  /** Starts a command under `commandId` (a new id when absent). */
  start(
    sandboxId: string,
    proc: BoxProcess,
    opts: {
      commandId?: string;
      timeoutSeconds: number;
      idleSeconds: number;
      killOnDisconnect: boolean;
      ttlSeconds: number;
    },
  ): CommandSession {
    const id = opts.commandId ?? randomUUID();
    const key = `${sandboxId}/${id}`;
    const session = new CommandSession({
      id,
      proc,
      ...opts,
      onDone: (s, ttlMs) => {
        const t = setTimeout(() => this.#sessions.get(key) === s && this.#sessions.delete(key), ttlMs);
        t.unref?.();
      },
    });
    this.#sessions.set(key, session);
    return session;
  }

  /** Kills every command of a sandbox and forgets them (its stop or deletion). */
  drop(sandboxId: string): void {
    for (const [key, s] of this.#sessions) {
      if (!key.startsWith(`${sandboxId}/`)) continue;
      if (!s.done) s.kill();
      this.#sessions.delete(key);
    }
  }
}
