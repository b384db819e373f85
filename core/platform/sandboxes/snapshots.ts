/**
 * Snapshots of the sandbox API: an image to create sandboxes from (`POST /snapshots` with
 * `docker_image`), or an image plus the files of a sandbox's working directory, captured as a tar
 * archive by running `tar` in the sandbox (`POST /boxes/{name}/snapshot`) and unpacked into
 * each sandbox created from it. Ready at once; their rows: ../store/snapshots.ts.
 */
import { agentcliError, SnapshotCaptureFailed, SnapshotTooLarge } from "../../kernel/index.ts";
import { describeLimit } from "../api/limits.ts";
import { type SandboxRow, type SandboxService, SNAPSHOT_ARCHIVE } from "../store/sandboxes.ts";
import type { SnapshotRow } from "../store/snapshots.ts";
import { collect } from "./runtime.ts";

/** The API form (LangSmith's `Snapshot`). */
export function snapshotResource(row: SnapshotRow) {
  return {
    id: row.id,
    name: row.name,
    status: "ready",
    docker_image: row.docker_image,
    fs_capacity_bytes: row.fs_capacity_bytes === null ? null : Number(row.fs_capacity_bytes),
    fs_used_bytes: row.files_size === null ? 0 : Number(row.files_size),
    source_sandbox_id: row.source_sandbox_id ?? undefined,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/**
 * The files of a sandbox's working directory as a tar archive (at most `maxBytes`): packed by
 * `tar` in the sandbox, read out, and removed there.
 */
export async function captureFiles(boxes: SandboxService, row: SandboxRow, maxBytes: number): Promise<Uint8Array> {
  const { runtime, ref } = await boxes.use(row);
  const archive = `${runtime.workdir}/${SNAPSHOT_ARCHIVE}`;
  const packed = await collect(
    runtime.run(ref, {
      command: `tar -C ${runtime.workdir} --exclude=./${SNAPSHOT_ARCHIVE} -cf ${archive} . 2>&1`,
      timeoutMs: 300_000,
    }),
    64 * 1024,
  );
  const files = packed.exitCode === 0 ? await runtime.download(ref, archive, maxBytes) : null;
  await collect(runtime.run(ref, { command: `rm -f ${archive}`, timeoutMs: 60_000 }));
  if (!files || files.error === "too_large") {
    if (files) {
      const limit = describeLimit("maxUploadBytes", maxBytes);
      throw agentcliError(SnapshotTooLarge, { name: row.name, limit }, { status: 413 });
    }
    const reason = new TextDecoder().decode(packed.stdout).trim() || `tar exited with ${packed.exitCode}`;
    throw agentcliError(SnapshotCaptureFailed, { name: row.name, reason }, { status: 422 });
  }
  if (files.error) {
    throw agentcliError(SnapshotCaptureFailed, { name: row.name, reason: files.error }, { status: 422 });
  }
  return files.content;
}
