/**
 * Reading requests: a JSON body validated by a zod schema, and list query parameters
 * (`limit` 1-100 default 20, `offset` >= 0, booleans, comma-separated lists), each problem
 * a 422 naming the field.
 */
import type { Context } from "hono";
import type { z } from "zod";
import { invalid, invalidField } from "./api-error.ts";
import { issuesToDetail, REVISION_STATUSES, DEPLOYMENT_STATUSES, DEPLOYMENT_TYPES } from "./schema.ts";
import { isUuid } from "./store.ts";

/** Parses the JSON body; `immutable` fields present in it are refused with their own message. */
export async function readBody<S extends z.ZodType>(c: Context, schema: S, immutable: readonly string[] = []): Promise<z.infer<S>> {
  let raw: unknown;
  try {
    const text = await c.req.text();
    raw = text.trim() ? JSON.parse(text) : {};
  } catch {
    throw invalidField(["body"], "is not valid JSON", "json_invalid");
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw invalidField(["body"], "must be a JSON object", "type_error");
  const locked = immutable.filter((f) => f in (raw as Record<string, unknown>));
  if (locked.length) {
    throw invalid(locked.map((f) => ({ loc: ["body", f], msg: `cannot be changed after creation`, type: "immutable" })));
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalid(issuesToDetail(parsed.error.issues, "body"));
  return parsed.data;
}

function intParam(c: Context, name: string, def: number, min: number, max: number): number {
  const v = c.req.query(name);
  if (v === undefined || v === "") return def;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min || n > max) throw invalidField(["query", name], `must be an integer from ${min}${max === Infinity ? "" : ` to ${max}`}`, "int_parsing");
  return n;
}

function boolParam(c: Context, name: string): boolean | undefined {
  const v = c.req.query(name);
  if (v === undefined || v === "") return undefined;
  if (v === "true") return true;
  if (v === "false") return false;
  throw invalidField(["query", name], `must be "true" or "false"`, "bool_parsing");
}

function listParam(c: Context, name: string, allowed?: readonly string[], uuid = false): string[] | undefined {
  const v = c.req.query(name);
  if (v === undefined || v === "") return undefined;
  const items = v.split(",").map((s) => s.trim()).filter(Boolean);
  for (const item of items) {
    if (allowed && !allowed.includes(item)) throw invalidField(["query", name], `"${item}" is not one of ${allowed.join(", ")}`, "enum");
    if (uuid && !isUuid(item)) throw invalidField(["query", name], `"${item}" is not a uuid`, "uuid_parsing");
  }
  return items;
}

export function pageParams(c: Context): { limit: number; offset: number } {
  return { limit: intParam(c, "limit", 20, 1, 100), offset: intParam(c, "offset", 0, 0, Infinity) };
}

/** Filters of `GET /v2/deployments`. */
export function deploymentFilters(c: Context) {
  const deploymentType = c.req.query("deployment_type") || undefined;
  if (deploymentType && !(DEPLOYMENT_TYPES as readonly string[]).includes(deploymentType)) {
    throw invalidField(["query", "deployment_type"], `must be one of ${DEPLOYMENT_TYPES.join(", ")}`, "enum");
  }
  return {
    ...pageParams(c),
    nameContains: c.req.query("name_contains") || undefined,
    status: listParam(c, "status", DEPLOYMENT_STATUSES),
    remoteReconciled: boolParam(c, "remote_reconciled"),
    tagValueIds: listParam(c, "tag_value_ids", undefined, true),
    imageVersion: c.req.query("image_version") || undefined,
    deploymentType,
    deploymentIds: listParam(c, "deployment_ids", undefined, true),
  };
}

/** Filters of `GET /v2/deployments/{id}/revisions`. */
export function revisionFilters(c: Context) {
  return { ...pageParams(c), status: listParam(c, "status", REVISION_STATUSES), remoteReconciled: boolParam(c, "remote_reconciled") };
}
