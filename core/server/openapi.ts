/**
 * The OpenAPI 3.1 document of what the server serves (`GET /openapi.json`), built from one
 * table of operations and the zod request schemas.
 */
import { z } from "zod";
import { isPublicPath } from "../auth/public-paths.ts";
import { PROTOCOL_OPERATIONS, PROTOCOL_SCHEMAS } from "./protocols/openapi-operations.ts";
import * as s from "./schemas.ts";

type Op = [method: string, path: string, summary: string, body?: z.ZodType];

const OPERATIONS: Op[] = [
  ["get", "/ok", "Health check"],
  ["get", "/info", "Server information"],
  ["post", "/assistants", "Create an assistant", s.assistantCreate],
  ["post", "/assistants/search", "Search assistants", s.assistantSearch],
  ["post", "/assistants/count", "Count assistants", s.assistantSearch],
  ["get", "/assistants/{assistant_id}", "Get an assistant"],
  ["patch", "/assistants/{assistant_id}", "Update an assistant (new version)", s.assistantPatch],
  ["delete", "/assistants/{assistant_id}", "Delete an assistant"],
  ["get", "/assistants/{assistant_id}/graph", "Get the assistant's graph"],
  ["get", "/assistants/{assistant_id}/schemas", "Get the assistant's schemas"],
  ["get", "/assistants/{assistant_id}/subgraphs", "Get the assistant's subgraphs"],
  ["post", "/assistants/{assistant_id}/versions", "List assistant versions", s.assistantVersions],
  ["post", "/assistants/{assistant_id}/latest", "Set the latest assistant version", s.assistantLatest],
  ["post", "/threads", "Create a thread", s.threadCreate],
  ["post", "/threads/search", "Search threads", s.threadSearch],
  ["post", "/threads/count", "Count threads", s.threadCount],
  ["post", "/threads/prune", "Delete threads, or keep only their latest state (strategy keep_latest)", s.threadPrune],
  ["get", "/threads/{thread_id}", "Get a thread"],
  ["patch", "/threads/{thread_id}", "Update a thread's metadata", s.threadPatch],
  ["delete", "/threads/{thread_id}", "Delete a thread"],
  ["post", "/threads/{thread_id}/copy", "Copy a thread"],
  ["get", "/threads/{thread_id}/state", "Get a thread's state"],
  ["post", "/threads/{thread_id}/state", "Update a thread's state", s.stateUpdate],
  ["get", "/threads/{thread_id}/state/{checkpoint_id}", "Get a thread's state at a checkpoint"],
  ["post", "/threads/{thread_id}/state/checkpoint", "Get a thread's state at a checkpoint", s.stateAtCheckpoint],
  ["post", "/threads/{thread_id}/history", "Get a thread's history", s.history],
  ["get", "/threads/{thread_id}/stream", "Join the stream of a thread's latest run (SSE)"],
  ["post", "/threads/{thread_id}/runs", "Create a background run", s.runCreate],
  ["get", "/threads/{thread_id}/runs", "List runs"],
  ["post", "/threads/{thread_id}/runs/stream", "Create a run and stream it (SSE)", s.runCreate],
  ["post", "/threads/{thread_id}/runs/wait", "Create a run and wait for its output", s.runCreate],
  ["get", "/threads/{thread_id}/runs/{run_id}", "Get a run"],
  ["delete", "/threads/{thread_id}/runs/{run_id}", "Delete a run"],
  ["get", "/threads/{thread_id}/runs/{run_id}/join", "Wait for a run's output"],
  ["get", "/threads/{thread_id}/runs/{run_id}/stream", "Join a run's stream (SSE, Last-Event-ID)"],
  ["post", "/threads/{thread_id}/runs/{run_id}/cancel", "Cancel a run (?wait, ?action=interrupt|rollback)"],
  ["post", "/runs", "Create a stateless background run", s.runCreate],
  ["post", "/runs/stream", "Create a stateless run and stream it (SSE)", s.runCreate],
  ["post", "/runs/wait", "Create a stateless run and wait for its output", s.runCreate],
  ["post", "/runs/batch", "Create stateless runs in a batch"],
  ["post", "/runs/cancel", "Cancel several runs", s.runsCancelMany],
  ["post", "/runs/crons", "Create a stateless cron (a new thread per firing)", s.cronCreate],
  ["post", "/threads/{thread_id}/runs/crons", "Create a cron on a thread", s.cronCreate],
  ["post", "/runs/crons/search", "Search crons", s.cronSearch],
  ["post", "/runs/crons/count", "Count crons", s.cronCount],
  ["patch", "/runs/crons/{cron_id}", "Update a cron", s.cronPatch],
  ["delete", "/runs/crons/{cron_id}", "Delete a cron"],
  ["put", "/store/items", "Put a store item", s.storePut],
  ["get", "/store/items", "Get a store item"],
  ["delete", "/store/items", "Delete a store item", s.storeDelete],
  ["post", "/store/items/search", "Search store items", s.storeSearch],
  ["post", "/store/namespaces", "List store namespaces", s.storeNamespaces],
];

function bodySchema(schema: z.ZodType): unknown {
  try {
    return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  } catch {
    return { type: "object" };
  }
}

const errorBody = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });

/**
 * How requests authenticate: the identity provider's token when the project has `[auth]`,
 * `x-api-key` (the deployment's `PLATFORM_API_KEY`) when it has none; a provider such as
 * `anonymous` accepts every request.
 */
const SECURITY_SCHEMES = {
  bearer: { type: "http", scheme: "bearer", description: "The identity provider's session token (projects with [auth])." },
  apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "The deployment's PLATFORM_API_KEY (projects without [auth])." },
};

/**
 * Builds the OpenAPI document; `extraPaths` lists paths mounted by other components: the
 * MCP and A2A groups are described operation by operation, others as one wildcard entry.
 */
export function openApiDocument(opts: { title: string; version: string; extraPaths?: string[] }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [method, path, summary, body] of OPERATIONS) {
    const open = isPublicPath(path);
    const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    (paths[path] ??= {})[method] = {
      summary,
      ...(params.length ? { parameters: params } : {}),
      ...(body ? { requestBody: { required: true, content: { "application/json": { schema: bodySchema(body) } } } } : {}),
      ...(open ? { security: [] } : {}),
      responses: {
        "200": { description: "Success" },
        ...(open ? {} : { "401": errorBody("No valid credentials") }),
        "404": errorBody("Not found"),
        "409": errorBody("Conflict"),
        "422": errorBody("Invalid request"),
      },
    };
  }
  for (const p of opts.extraPaths ?? []) {
    const described = PROTOCOL_OPERATIONS[p];
    if (described) Object.assign(paths, described);
    else {
      const security = isPublicPath(`${p}/`) ? { security: [] } : {};
      paths[`${p}/*`] ??= { get: { summary: `Mounted component at ${p}`, ...security, responses: { "200": { description: "Success" } } } };
    }
  }
  return {
    openapi: "3.1.0",
    info: { title: opts.title, version: opts.version },
    security: [{ bearer: [] }, { apiKey: [] }],
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: {
        Error: { type: "object", properties: { detail: { type: "string" }, hint: { type: "string" }, code: { type: "string" } }, required: ["detail"] },
        ...PROTOCOL_SCHEMAS,
      },
    },
  };
}
