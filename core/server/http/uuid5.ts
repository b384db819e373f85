/**
 * Name-based UUIDs (RFC 9562 version 5): stable ids for the default assistants.
 */
import { createHash } from "node:crypto";

/** The RFC namespace for URLs, used for assistant names. */
export const NAMESPACE_URL = "6ba7b811-9dad-11d1-80b4-00c04fd430c8";

/** The version-5 UUID of `name` in `namespace`. */
export function uuid5(name: string, namespace = NAMESPACE_URL): string {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  const hash = createHash("sha1").update(ns).update(name, "utf8").digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
