/**
 * Where the control plane's sandboxes run: one small interface (create a sandbox's machine,
 * run a command in it, move a file in or out, stop, remove), with a runtime per compute: on a
 * local listener the local sandbox runtime (`--sandbox local`, bubblewrap) through the
 * `sandbox:create` hook, on a `k8s` listener a pod per sandbox.
 *
 * @example
 * const ref = await rt.create({ id, tenantId, image: "python:3" });
 * const p = rt.run(ref, { command: "echo hi", timeoutMs: 5000 });
 * for await (const chunk of p.stdout) process.stdout.write(chunk);
 * const { exitCode } = await p.exited;
 */
import { concatBytes } from "../../kernel/index.ts";

/** A command running in a sandbox. */
export interface BoxProcess {
  stdout: AsyncIterable<Uint8Array>;
  stderr: AsyncIterable<Uint8Array>;
  /** Resolves when it ends; `timedOut` when it was killed at its timeout. */
  exited: Promise<{ exitCode: number | null; timedOut: boolean }>;
  /** Kills it (where the runtime can: the local runtime ends commands only at their timeout). */
  kill(): void;
}

export interface RunOptions {
  command: string;
  /** Default `/bin/bash`. */
  shell?: string;
  env?: Record<string, string>;
  cwd?: string;
  /** Killed after this long; 0 or absent: the runtime's default. */
  timeoutMs?: number;
}

/** Per-file failures, as deepagents spells them. */
export type BoxFileError = "file_not_found" | "permission_denied" | "is_directory" | "invalid_path";

/** What a runtime needs to make a sandbox's machine. */
export interface BoxSpec {
  id: string;
  tenantId: string;
  image: string;
  memBytes?: number | null;
  vcpus?: number | null;
  fsCapacityBytes?: number | null;
}

export interface BoxRuntime {
  readonly kind: string;
  /** The working directory of commands (and `$HOME`). */
  readonly workdir: string;
  /** Makes the sandbox's machine (or makes it again after a stop); returns the runtime's reference to it. */
  create(box: BoxSpec, ref?: string | null): Promise<string>;
  run(ref: string, opts: RunOptions): BoxProcess;
  /** Writes a file, creating its folders. */
  upload(ref: string, path: string, content: Uint8Array): Promise<BoxFileError | null>;
  download(
    ref: string,
    path: string,
    maxBytes: number,
  ): Promise<{ content: Uint8Array; error: null } | { content: null; error: BoxFileError | "too_large" }>;
  /** Releases its compute; its files stay. */
  stop(ref: string): Promise<void>;
  /** Deletes it and its files (missing: fine). */
  remove(ref: string): Promise<void>;
  close(): Promise<void>;
}

/** Collects a command's whole output (bounded: beyond `limit` bytes per stream the rest is dropped). */
export async function collect(
  p: BoxProcess,
  limit = 64 * 1024 * 1024,
): Promise<{ stdout: Uint8Array; stderr: Uint8Array; exitCode: number | null; timedOut: boolean; truncated: boolean }> {
  let truncated = false;
  const drain = async (s: AsyncIterable<Uint8Array>) => {
    const parts: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of s) {
      if (size + chunk.byteLength > limit) {
        truncated = true;
        if (size < limit) parts.push(chunk.subarray(0, limit - size));
        size = limit;
        continue;
      }
      parts.push(chunk);
      size += chunk.byteLength;
    }
    return concatBytes(parts);
  };
  const [stdout, stderr, exit] = await Promise.all([drain(p.stdout), drain(p.stderr), p.exited]);
  return { stdout, stderr, ...exit, truncated };
}

/** A POSIX shell word. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command line that runs `opts.command` with `opts.shell`, in `opts.cwd`, with `opts.env`:
 * for runtimes that take one shell command.
 */
export function commandLine(opts: RunOptions): string {
  const env = Object.entries(opts.env ?? {}).filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)).map(([k, v]) =>
    `export ${k}=${shellQuote(v)}; `
  ).join("");
  const cd = opts.cwd ? `cd -- ${shellQuote(opts.cwd)} || exit 1; ` : "";
  const shell = opts.shell ?? "/bin/bash";
  return `${cd}${env}exec ${shellQuote(shell)} -c ${shellQuote(opts.command)}`;
}
