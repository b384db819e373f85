/**
 * The control plane's OpenAPI 3.1 document (`GET /openapi.json`, shown at `/docs`), generated
 * by `@hono/zod-openapi` from one table of routes and the zod schemas the handlers validate
 * request bodies with: one schema, both uses. tests/platform/openapi.test.ts checks that every
 * route the control plane answers is here.
 *
 * @example
 * app.get("/openapi.json", (c) => c.json(platformOpenApiDocument(VERSION)));
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { type core, toJSONSchema } from "zod";
import { DEPLOYMENT_BODIES } from "../routes/deployments.ts";
import { SANDBOX_BODIES } from "../routes/sandbox-bodies.ts";
import { ListenerCreateBody, ListenerPatchBody, TokenMetadataBody } from "./schema.ts";

type Method = "get" | "post" | "put" | "patch" | "delete";
/** method, path, summary, body schema, and how the route authenticates when not by `X-Api-Key`. */
type Op = [method: Method, path: string, summary: string, body?: core.$ZodType, auth?: "none" | "signed"];

const OPERATIONS: Op[] = [
  ["get", "/ok", "Health check", undefined, "none"],
  ["get", "/openapi.json", "This OpenAPI document", undefined, "none"],
  ["get", "/docs", "The API reference of this document (Swagger UI)", undefined, "none"],
  ["get", "/docs/{file}", "A static file of the API reference", undefined, "none"],
  ["get", "/favicon.ico", "The favicon", undefined, "none"],
  ["post", "/v2/deployments", "Create a deployment (and its first revision)", DEPLOYMENT_BODIES.CreateBody],
  ["get", "/v2/deployments", "List deployments (name_contains, status, limit, offset)"],
  ["get", "/v2/deployments/{deployment_id}", "Get a deployment"],
  [
    "patch",
    "/v2/deployments/{deployment_id}",
    "Update a deployment (a new revision when source_revision_config changes)",
    DEPLOYMENT_BODIES.PatchBody,
  ],
  ["delete", "/v2/deployments/{deployment_id}", "Delete a deployment"],
  ["post", "/v2/deployments/{deployment_id}/upload-url", "Get a signed URL to upload a bundle for the next revision"],
  ["get", "/v2/deployments/{deployment_id}/revisions", "List a deployment's revisions"],
  ["get", "/v2/deployments/{deployment_id}/revisions/{revision_id}", "Get a revision"],
  ["get", "/v2/deployments/{deployment_id}/revisions/{revision_id}/logs", "A revision's build and deploy logs"],
  [
    "get",
    "/v2/deployments/{deployment_id}/usage",
    "The deployment's token usage and estimated cost, as its GET /usage answers its owner",
  ],
  ["post", "/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy", "Redeploy a revision"],
  [
    "post",
    "/v2/deployments/{deployment_id}/rollback",
    "Roll back: a new revision serving an earlier revision's build (no rebuild), rollback_of naming it",
    DEPLOYMENT_BODIES.RollbackBody,
  ],
  ["post", "/v2/deployments/{deployment_id}/canary/promote", "Promote the running canary: it takes all traffic"],
  ["post", "/v2/deployments/{deployment_id}/canary/abort", "Abort the running canary: its threads go back"],
  [
    "get",
    "/v2/deployments/{deployment_id}/revisions/{revision_id}/bundle",
    "Download a revision's bundle (API key or the revision's bundle token)",
    undefined,
    "signed",
  ],
  ["put", "/v2/uploads/{object_path}", "Upload a bundle to a signed URL from upload-url", undefined, "signed"],
  ["get", "/v2/listeners", "List listeners"],
  ["post", "/v2/listeners", "Create a listener", ListenerCreateBody],
  ["get", "/v2/listeners/{listener_id}", "Get a listener"],
  ["patch", "/v2/listeners/{listener_id}", "Update a listener", ListenerPatchBody],
  ["get", "/v2/auth/tokens", "List the caller's provider tokens"],
  ["patch", "/v2/auth/tokens/{token_id}/metadata", "Update a token's metadata (its owner only)", TokenMetadataBody],
  ["get", "/v2/templates", "List the templates internal_template deployments can name"],
  ["get", "/v2/templates/{name}", "Get a template"],
  ["get", "/v1/integrations/repohost/{integration_id}/repos", "Repositories available to deploy"],
  [
    "get",
    "/v1/integrations/forge/repohost/{integration_id}/repos",
    "Repositories of a forge integration available to deploy",
  ],
  [
    "post",
    "/v1/integrations/{integration_id}/webhook",
    "Push webhook for build_on_push (signed with the integration's webhook secret)",
    undefined,
    "signed",
  ],
  ["post", "/v2/sandboxes/boxes", "Create a sandbox", SANDBOX_BODIES.CreateBody],
  ["get", "/v2/sandboxes/boxes", "List sandboxes"],
  ["get", "/v2/sandboxes/boxes/{name}", "Get a sandbox"],
  ["patch", "/v2/sandboxes/boxes/{name}", "Update a sandbox", SANDBOX_BODIES.PatchBody],
  ["delete", "/v2/sandboxes/boxes/{name}", "Delete a sandbox"],
  ["get", "/v2/sandboxes/boxes/{name}/status", "A sandbox's status"],
  ["post", "/v2/sandboxes/boxes/{name}/start", "Start a sandbox"],
  ["post", "/v2/sandboxes/boxes/{name}/stop", "Stop a sandbox"],
  ["post", "/v2/sandboxes/boxes/{name}/snapshot", "Capture a snapshot of a sandbox", SANDBOX_BODIES.CaptureBody],
  ["post", "/v2/sandboxes/snapshots", "Create a snapshot from an image", SANDBOX_BODIES.SnapshotBody],
  ["get", "/v2/sandboxes/snapshots", "List snapshots"],
  ["get", "/v2/sandboxes/snapshots/{id}", "Get a snapshot"],
  ["delete", "/v2/sandboxes/snapshots/{id}", "Delete a snapshot"],
  ["post", "/v2/sandboxes/dataplane/{id}/execute", "Run a command in a sandbox", SANDBOX_BODIES.ExecuteBody],
  ["get", "/v2/sandboxes/dataplane/{id}/execute/ws", "Run a command in a sandbox over a WebSocket (upgrade)"],
  ["post", "/v2/sandboxes/dataplane/{id}/upload", "Upload a file into a sandbox"],
  ["get", "/v2/sandboxes/dataplane/{id}/download", "Download a file from a sandbox"],
];

const errorBody = (description: string) => ({
  description,
  content: {
    "application/json": {
      schema: {
        type: "object" as const,
        properties: { detail: { description: "What is wrong and how to fix it: a message, or a list of fields" } },
        required: ["detail"],
      },
    },
  },
});

function operation([method, path, summary, body, auth]: Op) {
  const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  return createRoute({
    method: method as "get",
    path,
    summary,
    tags: [/^\/v\d\/([^/]+)/.exec(path)?.[1] ?? "service"],
    request: {
      ...(params.length ? { params: z.object(Object.fromEntries(params.map((p) => [p, z.string()]))) } : {}),
      ...(body ? { body: { required: true, content: { "application/json": { schema: bodySchema(body) } } } } : {}),
    },
    ...(auth ? { security: [] } : {}),
    responses: {
      200: { description: "Success" },
      ...(auth === "none" ? {} : { 401: errorBody("No valid credentials") }),
      404: errorBody("Not found"),
      ...(body ? { 422: errorBody("Invalid request: `detail` lists each field and what is wrong with it") } : {}),
    },
  });
}

/**
 * A body's JSON Schema, as the handler's zod schema accepts it (zod's own converter: the bodies
 * are strict objects, whose "no other members" the route generator cannot express).
 */
function bodySchema(body: core.$ZodType): never {
  const { $schema: _, ...schema } = toJSONSchema(body, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return schema as never;
}

const documents = new Map<string, Record<string, unknown>>();

/** The control plane's OpenAPI document, built once per version. */
export function platformOpenApiDocument(version: string): Record<string, unknown> {
  let doc = documents.get(version);
  if (!doc) {
    const described = new OpenAPIHono();
    described.openAPIRegistry.registerComponent("securitySchemes", "apiKey", {
      type: "apiKey",
      in: "header",
      name: "X-Api-Key",
      description: "A control-plane API key of your tenant.",
    });
    for (const op of OPERATIONS) described.openAPIRegistry.registerPath(operation(op));
    doc = described.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "agentcli control plane API", version },
      security: [{ apiKey: [] }],
    }) as unknown as Record<string, unknown>;
    documents.set(version, doc);
  }
  return doc;
}
