/**
 * The request bodies of the sandbox API (../routes/sandboxes.ts, snapshots.ts, dataplane.ts) and
 * how they are read: every problem is a 422 `value_error` naming the field, which the LangSmith
 * client maps to a validation error.
 */
import type { Context } from "hono";
import { z } from "zod";
import { invalid, invalidField } from "../api/api-error.ts";
import { readBodyText } from "../api/request.ts";
import { issuesToDetail } from "../api/schema.ts";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const name = z.string().regex(NAME, "must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit");
const ttl = z.number().int().nonnegative().refine((v) => v % 60 === 0, "must be a multiple of 60 seconds (0 disables)");

export const CreateBody = z.strictObject({
  name: name.optional(),
  image: z.string().min(1).optional(),
  wait_for_ready: z.boolean().optional(),
  timeout: z.number().int().positive().optional(),
  snapshot_id: z.string().optional(),
  snapshot_name: z.string().optional(),
  idle_ttl_seconds: ttl.optional(),
  delete_after_stop_seconds: ttl.optional(),
  vcpus: z.number().int().positive().optional(),
  mem_bytes: z.number().int().positive().optional(),
  fs_capacity_bytes: z.number().int().positive().optional(),
  mount_config: z.unknown().optional(),
  proxy_config: z.unknown().optional(),
  listener_id: z.string().optional(),
});

export const PatchBody = z.strictObject({
  name: name.optional(),
  idle_ttl_seconds: ttl.optional(),
  delete_after_stop_seconds: ttl.optional(),
});

export const SnapshotBody = z.strictObject({
  name,
  docker_image: z.string().min(1),
  fs_capacity_bytes: z.number().int().positive().optional(),
  registry_id: z.string().optional(),
});

export const CaptureBody = z.strictObject({
  name,
  docker_image: z.string().min(1).optional(),
  fs_capacity_bytes: z.number().int().positive().optional(),
});

export const SnapshotQuery = z.object({
  name_contains: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
  offset: z.coerce.number().int().min(0).optional(),
});

export const ExecuteBody = z.strictObject({
  command: z.string().min(1),
  timeout: z.number().nonnegative().optional(),
  shell: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
});

/** Reads and validates a JSON body; every problem is a 422 `value_error` naming the field (what the LangSmith client maps to a validation error). */
export async function body<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await readBodyText(c, (c.get("maxBodyBytes") as number | undefined) ?? Infinity);
  let raw: unknown;
  try {
    raw = text.trim() ? JSON.parse(text) : {};
  } catch {
    throw invalidField(["body"], "is not valid JSON", "value_error");
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidField(["body"], "must be a JSON object", "value_error");
  }
  const parsed = schema.safeParse(raw);
  // The LangSmith client shows `msg` alone, so it names the field too.
  if (!parsed.success) {
    throw invalid(
      issuesToDetail(parsed.error.issues, "body").map((d) => ({
        ...d,
        msg: `${d.loc.slice(1).join(".") || "body"}: ${d.msg}`,
        type: "value_error",
      })),
    );
  }
  return parsed.data;
}

/** The request bodies above, for the control plane's OpenAPI document (../api/openapi.ts). */
export const SANDBOX_BODIES = { CreateBody, PatchBody, SnapshotBody, CaptureBody, ExecuteBody };
