/**
 * Where the control plane's sandboxes run: one small interface (create a sandbox's machine,
 * spawn a process in it, stop its processes, remove it), with a runtime per compute: on a
 * local listener bubblewrap processes over a folder per sandbox, on a `k8s` listener a pod
 * per sandbox. Everything the sandbox API does (commands, file upload and download) is a
 * process spawned here, so a file is read and written as the sandbox itself sees it.
 *
 * @example
 * const rt: BoxRuntime = new LocalBoxRuntime({ dataDir });
 * await rt.create({ id, image: "python:3" });
 * const p = rt.spawn(id, { argv: ["/bin/bash", "-c", "echo hi"], timeoutMs: 5000 });
 * for await (const chunk of p.stdout) process.stdout.write(chunk);
 * const { exitCode } = await p.exited;
 */

/** A process running in a sandbox. */
export interface BoxProcess {
  readonly pid: number | null;
  stdout: AsyncIterable<Uint8Array>;
  stderr: AsyncIterable<Uint8Array>;
  /** Resolves when it ends; `timedOut` when it was killed at its timeout. */
  exited: Promise<{ exitCode: number | null; timedOut: boolean }>;
  /** Writes to its standard input (ignored once it closed). */
  write(data: string | Uint8Array): void;
  /** Closes its standard input. */
  end(): void;
  /** Kills it and everything it started. */
  kill(): void;
}

export interface SpawnOptions {
  argv: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Killed after this long (its whole process group); 0 or absent: no limit. */
  timeoutMs?: number;
}

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
  /** Makes the sandbox's machine (folder, pod); idempotent. Throws with a readable reason. */
  create(box: BoxSpec): Promise<void>;
  spawn(id: string, opts: SpawnOptions): BoxProcess;
  /** Kills the sandbox's processes; its files stay. */
  stop(id: string): Promise<void>;
  /** Kills its processes and deletes its files (missing: fine). */
  remove(id: string): Promise<void>;
  close(): Promise<void>;
}

/** Collects a process's whole output (bounded: beyond `limit` bytes per stream the rest is dropped). */
export async function collect(p: BoxProcess, limit = 64 * 1024 * 1024): Promise<{ stdout: Uint8Array; stderr: Uint8Array; exitCode: number | null; timedOut: boolean; truncated: boolean }> {
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
    const out = new Uint8Array(size);
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.byteLength;
    }
    return out;
  };
  const [stdout, stderr, exit] = await Promise.all([drain(p.stdout), drain(p.stderr), p.exited]);
  return { stdout, stderr, ...exit, truncated };
}
