/**
 * Reading requests: the URL checked before routing (percent-encoding, text the database
 * cannot store), a JSON body read up to the body limit and validated by a zod schema, and
 * list query parameters (`limit` 1-100 default 20, `offset` >= 0, booleans, comma-separated
 * lists), each problem a 4xx naming the field.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { z } from "zod";
import { badText, MAX_JSON_DEPTH } from "../../server/index.ts";
import { agentcliError, PlatformBodyTooLarge } from "../../kernel/index.ts";
import { type FieldError, invalid, invalidField } from "./api-error.ts";
import { describeLimit } from "./limits.ts";
import { DEPLOYMENT_STATUSES, DEPLOYMENT_TYPES, issuesToDetail, REVISION_STATUSES } from "./schema.ts";
import { isUuid } from "../store/deployments.ts";

/**
 * Refuses, before any route runs, a URL whose path is not valid percent-encoding or whose
 * path or query holds text PostgreSQL cannot store (NUL, unpaired surrogates): a 422 naming
 * the part, never a database error. A declared body over `maxBodyBytes` is a 413 here too
 * (uploads and sandbox file uploads excepted: they have their own limit); `readBodyText` enforces it while reading.
 */
export function requestGuards(maxBodyBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const url = new URL(c.req.url);
    let path: string;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      throw invalidField(["path"], "is not valid percent-encoding", "path_invalid");
    }
    const pathProblem = badText(path);
    if (pathProblem) throw invalidField(["path"], pathProblem, "path_invalid");
    for (const part of url.search.slice(1).split("&")) {
      if (!part) continue;
      const [rawName = "", rawValue = ""] = part.split(/=(.*)/s);
      let name: string;
      let value: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, " "));
        value = decodeURIComponent(rawValue.replace(/\+/g, " "));
      } catch {
        throw invalidField(
          ["query", rawName.length > 64 ? `${rawName.slice(0, 64)}...` : rawName],
          "is not valid percent-encoding",
          "query_invalid",
        );
      }
      const problem = badText(name) ?? badText(value);
      if (problem) throw invalidField(["query", badText(name) ? "(name)" : name], problem, "query_invalid");
    }
    const declared = Number(c.req.header("content-length") ?? "0");
    if (!url.pathname.startsWith("/v2/uploads/") && !SANDBOX_UPLOAD.test(url.pathname) && declared > maxBodyBytes) {
      throw bodyTooLarge(maxBodyBytes);
    }
    await next();
  };
}

/** Files uploaded into a sandbox (`routes-sandboxes.ts`) are bounded by the upload limit instead. */
const SANDBOX_UPLOAD = /^\/v2\/sandboxes\/dataplane\/[^/]+\/upload$/;

function bodyTooLarge(max: number) {
  return agentcliError(PlatformBodyTooLarge, { limit: describeLimit("maxBodyBytes", max) }, { status: 413 });
}

/** The body as UTF-8 text, read up to `maxBytes` (413 beyond, whatever Content-Length said); invalid UTF-8 is a 422. */
export async function readBodyText(c: Context, maxBytes: number): Promise<string> {
  const body = c.req.raw.body;
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw bodyTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let off = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, off);
    off += chunk.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw invalidField(["body"], "is not valid UTF-8", "unicode_invalid");
  }
}

/** The first place in a parsed JSON value holding text storage refuses (or nesting too deep), as a 422 entry. */
function unstorableText(value: unknown): FieldError | null {
  const stack: Array<{ v: unknown; loc: Array<string | number> }> = [{ v: value, loc: ["body"] }];
  while (stack.length) {
    const { v, loc } = stack.pop()!;
    if (typeof v === "string") {
      const problem = badText(v);
      if (problem) return { loc, msg: problem, type: "string_invalid" };
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (loc.length > MAX_JSON_DEPTH) {
      return { loc: loc.slice(0, 10), msg: `nests deeper than ${MAX_JSON_DEPTH} levels`, type: "too_deep" };
    }
    if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ v: item, loc: [...loc, i] }));
      continue;
    }
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      const problem = badText(k);
      if (problem) return { loc, msg: `has a key that ${problem}`, type: "string_invalid" };
      stack.push({ v: child, loc: [...loc, k] });
    }
  }
  return null;
}

/** Parses the JSON body; `immutable` fields present in it are refused with their own message. */
export async function readBody<S extends z.ZodType>(
  c: Context,
  schema: S,
  immutable: readonly string[] = [],
): Promise<z.infer<S>> {
  const text = await readBodyText(c, (c.get("maxBodyBytes") as number | undefined) ?? Infinity);
  let raw: unknown;
  try {
    raw = text.trim() ? JSON.parse(text) : {};
  } catch {
    throw invalidField(["body"], "is not valid JSON", "json_invalid");
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidField(["body"], "must be a JSON object", "type_error");
  }
  const bad = unstorableText(raw);
  if (bad) throw invalid([bad]);
  const locked = immutable.filter((f) => f in (raw as Record<string, unknown>));
  if (locked.length) {
    throw invalid(
      locked.map((f) => ({ loc: ["body", f], msg: `cannot be changed after creation`, type: "immutable" })),
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalid(issuesToDetail(parsed.error.issues, "body"));
  return parsed.data;
}

/** A whole-number query parameter: `def` when absent, else from `min` to `max`. */
function intParam(c: Context, p: { name: string; def: number; min: number; max: number }): number {
  const { name, min, max } = p;
  const v = c.req.query(name);
  if (v === undefined || v === "") return p.def;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min || n > max) {
    throw invalidField(
      ["query", name],
      `must be an integer from ${min}${max === Infinity ? "" : ` to ${max}`}`,
      "int_parsing",
    );
  }
  return n;
}

function boolParam(c: Context, name: string): boolean | undefined {
  const v = c.req.query(name);
  if (v === undefined || v === "") return undefined;
  if (v === "true") return true;
  if (v === "false") return false;
  throw invalidField(["query", name], `must be "true" or "false"`, "bool_parsing");
}

/** A comma-separated query parameter: each item one of `allowed` (when given), or a uuid (`uuid`). */
function listParam(
  c: Context,
  name: string,
  check: { allowed?: readonly string[]; uuid?: boolean } = {},
): string[] | undefined {
  const { allowed, uuid = false } = check;
  const v = c.req.query(name);
  if (v === undefined || v === "") return undefined;
  const items = v.split(",").map((s) => s.trim()).filter(Boolean);
  for (const item of items) {
    if (allowed && !allowed.includes(item)) {
      throw invalidField(["query", name], `"${item}" is not one of ${allowed.join(", ")}`, "enum");
    }
    if (uuid && !isUuid(item)) throw invalidField(["query", name], `"${item}" is not a uuid`, "uuid_parsing");
  }
  return items;
}

export function pageParams(c: Context): { limit: number; offset: number } {
  return {
    limit: intParam(c, { name: "limit", def: 20, min: 1, max: 100 }),
    offset: intParam(c, { name: "offset", def: 0, min: 0, max: Number.MAX_SAFE_INTEGER }),
  };
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
    status: listParam(c, "status", { allowed: DEPLOYMENT_STATUSES }),
    remoteReconciled: boolParam(c, "remote_reconciled"),
    tagValueIds: listParam(c, "tag_value_ids", { uuid: true }),
    imageVersion: c.req.query("image_version") || undefined,
    deploymentType,
    deploymentIds: listParam(c, "deployment_ids", { uuid: true }),
  };
}

/** Filters of `GET /v2/deployments/{id}/revisions`. */
export function revisionFilters(c: Context) {
  return {
    ...pageParams(c),
    status: listParam(c, "status", { allowed: REVISION_STATUSES }),
    remoteReconciled: boolParam(c, "remote_reconciled"),
  };
}
