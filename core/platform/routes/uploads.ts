/**
 * Upload URLs (extension): `POST /v2/deployments/{id}/upload-url` answers a signed URL; a
 * `PUT` of the bundle bytes to it stores them as the object named `object_path`, which a
 * revision then names as `source_revision_config.source_tarball_path`. The archive is checked
 * while it streams in (`receiveArchive`): bounded, regular files only, safe paths. The URL is the
 * credential (HMAC-signed, expiring), so the uploader needs no API key; it is good for one
 * accepted upload: once its object holds bytes, every later PUT is 409, so the bytes a revision
 * was built from can never be replaced (a refused upload stores nothing and leaves the URL usable).
 */
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import {
  AgentcliError,
  agentcliError,
  concatBytes,
  PlatformUploadDeclaredTooLarge,
  PlatformUploadSignatureInvalid,
  PlatformUploadTooLarge,
  PlatformUploadTooManyEntries,
  PlatformUploadUnpacksTooLarge,
  PlatformUploadUrlExpired,
  UploadUrlUsed,
} from "../../kernel/index.ts";
import { TarRefused, TarScanner } from "../../bundle/index.ts";
import { invalidField, notFound } from "../api/api-error.ts";
import type { PlatformServices } from "../api/context.ts";
import { describeLimit, type PlatformLimits } from "../api/limits.ts";
import { fillUpload, getObject } from "../store/objects.ts";

const TTL_SECONDS = 3600;

function sign(objectPath: string, expires: number, secret: string): string {
  return createHmac("sha256", secret).update(`${objectPath}\n${expires}`).digest("base64url");
}

/** A signed PUT URL for `objectPath`, valid for an hour. */
export function signUpload(u: { base: string; objectPath: string; secret: string; now?: number }): string {
  const expires = Math.floor((u.now ?? Date.now()) / 1000) + TTL_SECONDS;
  return `${u.base.replace(/\/+$/, "")}/v2/uploads/${u.objectPath}?expires=${expires}&signature=${
    sign(u.objectPath, expires, u.secret)
  }`;
}

/**
 * Receives an upload: the body is read as a stream, at most `maxUploadBytes` of it (the
 * compressed bytes are what is stored), while a gunzip of it is checked entry by entry
 * (regular files only, safe paths, at most `maxArchiveEntries` entries and
 * `maxUnpackedBytes` unpacked) and thrown away: a gzip bomb stops at the limit.
 */
async function receiveArchive(body: ReadableStream<Uint8Array> | null, limits: PlatformLimits): Promise<Uint8Array> {
  if (!body) throw invalidField(["body"], "the upload is empty", "empty");
  const chunks: Uint8Array[] = [];
  let size = 0;
  const tooLarge = () =>
    agentcliError(PlatformUploadTooLarge, { limit: describeLimit("maxUploadBytes", limits.maxUploadBytes) }, {
      status: 413,
    });
  const keep = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      size += chunk.byteLength;
      if (size > limits.maxUploadBytes) throw tooLarge();
      chunks.push(chunk);
      controller.enqueue(chunk);
    },
  });
  const scan = new TarScanner({ maxBytes: limits.maxUnpackedBytes, maxEntries: limits.maxArchiveEntries });
  const reader = body.pipeThrough(keep).pipeThrough(
    new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>,
  ).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      scan.push(value);
    }
    if (!size) throw invalidField(["body"], "the upload is empty", "empty");
    scan.finish();
  } catch (err) {
    await reader.cancel().catch(() => {});
    if (err instanceof AgentcliError) throw err;
    if (err instanceof TarRefused) {
      if (err.reason === "bytes") {
        const limit = describeLimit("maxUnpackedBytes", limits.maxUnpackedBytes);
        throw agentcliError(PlatformUploadUnpacksTooLarge, { limit }, { status: 413 });
      }
      if (err.reason === "entries") {
        const limit = describeLimit("maxArchiveEntries", limits.maxArchiveEntries);
        throw agentcliError(PlatformUploadTooManyEntries, { limit }, { status: 413 });
      }
      throw invalidField(["body"], `is not a safe bundle archive: ${err.message}`, "archive_invalid");
    }
    if (!size) throw invalidField(["body"], "the upload is empty", "empty");
    throw invalidField(
      ["body"],
      `is not a gzip archive (${(err as Error).message}); upload the bundle "agentcli deploy" builds`,
      "archive_invalid",
    );
  }
  return concatBytes(chunks);
}

/** The 409 of a second PUT to a used upload URL: what was stored stays. */
function alreadyUsed(deploymentId: string) {
  return agentcliError(UploadUrlUsed, { deployment: deploymentId });
}

export function uploadRoutes(s: PlatformServices): Hono {
  const app = new Hono();
  app.put("/*", async (c) => {
    const raw = new URL(c.req.url).pathname.replace(/^.*?\/v2\/uploads\//, "");
    let objectPath: string;
    try {
      objectPath = decodeURIComponent(raw);
    } catch {
      throw invalidField(["path"], "is not valid percent-encoding", "path_invalid");
    }
    const expires = Number(c.req.query("expires"));
    const given = c.req.query("signature") ?? "";
    const expected = sign(objectPath, expires, s.uploadSecret);
    const ok = given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
    if (!ok) throw agentcliError(PlatformUploadSignatureInvalid);
    if (!(expires * 1000 > Date.now())) throw agentcliError(PlatformUploadUrlExpired);
    const object = await getObject(s.sql, objectPath);
    if (!object) throw notFound("upload", objectPath);
    if (object.bytes) throw alreadyUsed(object.deployment_id);
    const declared = Number(c.req.header("content-length") ?? "0");
    if (declared > s.limits.maxUploadBytes) {
      const limit = describeLimit("maxUploadBytes", s.limits.maxUploadBytes);
      throw agentcliError(PlatformUploadDeclaredTooLarge, { bytes: declared, limit }, { status: 413 });
    }
    const bytes = await receiveArchive(c.req.raw.body, s.limits);
    if (!(await fillUpload(s.sql, objectPath, bytes))) throw alreadyUsed(object.deployment_id);
    return c.json({ object_path: objectPath, size: bytes.byteLength });
  });
  return app;
}
