/**
 * Upload URLs (extension): `POST /v2/deployments/{id}/upload-url` answers a signed URL; a
 * `PUT` of the bundle bytes to it stores them as the object named `object_path`, which a
 * revision then names as `source_revision_config.source_tarball_path`. The URL is the
 * credential (HMAC-signed, expiring), so the uploader needs no API key.
 */
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { invalidField, notFound, unauthorized } from "./api-error.ts";
import type { PlatformServices } from "./context.ts";
import { getObject, putObject } from "./store.ts";
import { userError } from "../errors.ts";

const TTL_SECONDS = 3600;

function sign(objectPath: string, expires: number, secret: string): string {
  return createHmac("sha256", secret).update(`${objectPath}\n${expires}`).digest("base64url");
}

/** A signed PUT URL for `objectPath`, valid for an hour. */
export function signUpload(base: string, objectPath: string, secret: string, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + TTL_SECONDS;
  return `${base.replace(/\/+$/, "")}/v2/uploads/${objectPath}?expires=${expires}&signature=${sign(objectPath, expires, secret)}`;
}

export function uploadRoutes(s: PlatformServices): Hono {
  const app = new Hono();
  app.put("/*", async (c) => {
    const objectPath = decodeURIComponent(new URL(c.req.url).pathname.replace(/^.*?\/v2\/uploads\//, ""));
    const expires = Number(c.req.query("expires"));
    const given = c.req.query("signature") ?? "";
    const expected = sign(objectPath, expires, s.uploadSecret);
    const ok = given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
    if (!ok) throw unauthorized("Cannot accept the upload: the signature does not match; ask for a new upload URL");
    if (!(expires * 1000 > Date.now())) throw unauthorized("Cannot accept the upload: the upload URL expired; ask for a new one");
    const object = await getObject(s.sql, objectPath);
    if (!object) throw notFound("upload", objectPath);
    const declared = Number(c.req.header("content-length") ?? "0");
    if (declared > s.maxUploadBytes) throw userError("UNPROCESSABLE", { message: `Cannot accept the upload: ${declared} bytes is over the limit of ${s.maxUploadBytes}`, status: 413 });
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    if (bytes.byteLength > s.maxUploadBytes) throw userError("UNPROCESSABLE", { message: `Cannot accept the upload: over the limit of ${s.maxUploadBytes} bytes`, status: 413 });
    if (!bytes.byteLength) throw invalidField(["body"], "the upload is empty", "empty");
    await putObject(s.sql, { objectPath, tenantId: object.tenant_id, deploymentId: object.deployment_id, bytes });
    return c.json({ object_path: objectPath, size: bytes.byteLength });
  });
  return app;
}
