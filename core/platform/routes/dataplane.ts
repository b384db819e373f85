/**
 * Each sandbox's data plane under `/v2/sandboxes` at its `dataplane_url`
 * (`/dataplane/{id}`): `POST /execute` (blocking), `GET /execute/ws` (streaming, answered by
 * ../sandboxes/ws.ts on the upgrade), `POST /upload?path=` (multipart `file`),
 * `GET /download?path=`. Failures are in LangSmith's data-plane shape (`opError`).
 */
import type { Context, Hono } from "hono";
import { invalidField } from "../api/api-error.ts";
import type { PlatformEnv, PlatformServices } from "../api/context.ts";
import { describeLimit } from "../api/limits.ts";
import { type BoxFileError, collect } from "../sandboxes/runtime.ts";
import { body, ExecuteBody } from "./sandbox-bodies.ts";

/** A data-plane failure: its status, LangSmith's `error` name (which its client maps by) and the message. */
interface OpError {
  status: 400 | 404 | 408 | 413;
  error: string;
  message: string;
}

/** A data-plane error in LangSmith's shape (`{"detail": {"error", "message"}}`), which its client maps by `error`. */
function opError(c: Context, e: OpError): Response {
  return c.json({ detail: { error: e.error, message: e.message } }, e.status);
}

const FILE_ERROR_TEXT: Record<BoxFileError, string> = {
  file_not_found: "no such file",
  is_directory: "it is a directory",
  permission_denied: "permission denied",
  invalid_path: "the path is not absolute",
};

function filePath(c: Context): string {
  const path = c.req.query("path");
  if (!path) throw invalidField(["query", "path"], "is required (the file's path in the sandbox)", "value_error");
  if (path.includes("\0")) throw invalidField(["query", "path"], "must not contain NUL", "value_error");
  return path;
}

/** Adds the data-plane routes to the sandbox API's app. */
export function dataplaneRoutes(app: Hono<PlatformEnv>, s: PlatformServices): void {
  const boxes = s.sandboxes;
  const dp = "/dataplane/:id";
  app.post(`${dp}/execute`, async (c) => {
    const row = await boxes.byId(c.var.caller.tenantId, c.req.param("id"));
    const b = await body(c, ExecuteBody);
    const timeout = b.timeout ?? 60;
    const { runtime, ref } = await boxes.use(row);
    const proc = runtime.run(ref, {
      command: b.command,
      shell: b.shell,
      env: b.env,
      cwd: b.cwd,
      timeoutMs: timeout * 1000,
    });
    const r = await collect(proc);
    if (r.timedOut) {
      return opError(c, { status: 408, error: "CommandTimeout", message: `Command timed out after ${timeout}s` });
    }
    const text = new TextDecoder();
    return c.json({ stdout: text.decode(r.stdout), stderr: text.decode(r.stderr), exit_code: r.exitCode ?? -1 });
  });
  app.get(
    `${dp}/execute/ws`,
    (c) => c.json({ detail: "Cannot execute: this endpoint takes a WebSocket upgrade" }, 426),
  );
  app.post(`${dp}/upload`, async (c) => {
    const row = await boxes.byId(c.var.caller.tenantId, c.req.param("id"));
    const path = filePath(c);
    const declared = Number(c.req.header("content-length") ?? 0);
    if (declared > s.limits.maxUploadBytes) {
      return opError(c, {
        status: 413,
        error: "WriteError",
        message: `Cannot write "${path}": the upload is larger than ${
          describeLimit("maxUploadBytes", s.limits.maxUploadBytes)
        }`,
      });
    }
    let file: FormDataEntryValue | null;
    try {
      file = (await c.req.formData()).get("file");
    } catch {
      throw invalidField(["body"], "must be multipart/form-data with a 'file' part", "value_error");
    }
    if (!file || typeof file === "string") {
      throw invalidField(["body", "file"], "is missing (multipart part 'file' with the file's bytes)", "value_error");
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    const { runtime, ref } = await boxes.use(row);
    const error = await runtime.upload(ref, path, bytes);
    if (error) {
      return opError(c, {
        status: 400,
        error: "WriteError",
        message: `Cannot write "${path}": ${FILE_ERROR_TEXT[error]}`,
      });
    }
    return c.json({ path, size: bytes.byteLength });
  });
  app.get(`${dp}/download`, async (c) => {
    const row = await boxes.byId(c.var.caller.tenantId, c.req.param("id"));
    const path = filePath(c);
    const { runtime, ref } = await boxes.use(row);
    const r = await runtime.download(ref, path, s.limits.maxUploadBytes);
    if (r.error === "file_not_found") {
      return opError(c, { status: 404, error: "FileNotFound", message: `Cannot read "${path}": no such file` });
    }
    if (r.error === "too_large") {
      return opError(c, {
        status: 413,
        error: "ReadError",
        message: `Cannot read "${path}": it is larger than ${describeLimit("maxUploadBytes", s.limits.maxUploadBytes)}`,
      });
    }
    if (r.error) {
      return opError(c, {
        status: 400,
        error: "ReadError",
        message: `Cannot read "${path}": ${FILE_ERROR_TEXT[r.error]}`,
      });
    }
    return c.body(r.content as Uint8Array<ArrayBuffer>, 200, { "content-type": "application/octet-stream" });
  });
}
