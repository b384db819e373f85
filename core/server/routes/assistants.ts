/**
 * `/assistants`: create, search, count, get, patch, delete, graph, schemas, subgraphs,
 * versions, latest.
 */
import { type Context, Hono } from "hono";
import { resolveAssistant, type ServerDeps } from "../deps.ts";
import { agentcliError, DefaultAssistantReadOnly } from "../../kernel/index.ts";
import { type Assistant, isSystemAssistant } from "../../storage/index.ts";
import { idTaken, jsonBody, notFound, parseBody } from "../http/errors.ts";
import * as s from "../http/schemas.ts";
import { type CompiledGraph, ownedMetadata, patchMetadata } from "../../engine/index.ts";
import { type AppEnv, scopeOf, userOf } from "../http/auth-middleware.ts";
import { graphSchemas } from "./graph-info.ts";

/**
 * Client metadata: `owner` and `created_by` (which marks the deployment's default assistants)
 * are the server's; under LangGraph custom auth `owner` is as its handler wrote it.
 */
function clientMetadata(metadata: Record<string, unknown> | undefined, c?: Context<AppEnv>): Record<string, unknown> {
  const { created_by: _drop, ...rest } = c && userOf(c)?.langgraph ? { ...metadata } : patchMetadata(metadata);
  return rest;
}

/** The assistant of the request for a change: its owner's (404 for anyone else), never a default assistant (403). */
async function writable(deps: ServerDeps, c: Context<AppEnv>, action: string): Promise<Assistant> {
  const a = await resolveAssistant(deps, c.req.param("id")!, scopeOf(c));
  if (isSystemAssistant(a)) {
    throw agentcliError(DefaultAssistantReadOnly, { action, id: a.assistant_id, name: a.name, graphId: a.graph_id });
  }
  return a;
}

/** The assistants route group. */
export function assistantRoutes(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { storage } = deps;

  app.post("/", async (c) => {
    const b = parseBody(s.assistantCreate, await jsonBody(c));
    if (!deps.graphs.has(b.graph_id)) throw notFound("Graph", b.graph_id);
    const id = b.assistant_id ?? crypto.randomUUID();
    const created = await storage.assistants.create({
      assistant_id: id,
      graph_id: b.graph_id,
      config: b.config ?? {},
      context: b.context,
      metadata: ownedMetadata(userOf(c), clientMetadata(b.metadata, c)),
      name: b.name ?? "Untitled",
      description: b.description ?? null,
    });
    if (created) return c.json(created);
    // Another user's assistant is never returned, not even with "do_nothing".
    const mine = b.if_exists === "do_nothing" ? await storage.assistants.get(id, scopeOf(c)) : null;
    if (mine && !isSystemAssistant(mine)) return c.json(mine);
    throw idTaken("assistant", id);
  });

  app.post("/search", async (c) => {
    const b = parseBody(s.assistantSearch, await jsonBody(c));
    const rows = await storage.assistants.search({ ...b, limit: b.limit + 1 }, scopeOf(c));
    const page = rows.slice(0, b.limit);
    if (rows.length > b.limit) c.header("X-Pagination-Next", String(b.offset + b.limit));
    return c.json(b.select ? page.map((a) => pick(a, b.select!)) : page);
  });

  app.post(
    "/count",
    async (c) =>
      c.json(await storage.assistants.count(parseBody(s.assistantSearch.partial(), await jsonBody(c)), scopeOf(c))),
  );

  app.get("/:id", async (c) => c.json(await resolveAssistant(deps, c.req.param("id"), scopeOf(c))));

  app.patch("/:id", async (c) => {
    const b = parseBody(s.assistantPatch, await jsonBody(c));
    const a = await writable(deps, c, "update");
    if (b.graph_id && !deps.graphs.has(b.graph_id)) throw notFound("Graph", b.graph_id);
    return c.json(
      await storage.assistants.update(a.assistant_id, { ...b, metadata: b.metadata && clientMetadata(b.metadata) }),
    );
  });

  app.delete("/:id", async (c) => {
    const a = await writable(deps, c, "delete");
    if (c.req.query("delete_threads") === "true") {
      // The assistant's threads: those its runs ran on, and those whose metadata names it.
      for (const threadId of await storage.threads.ofAssistant(a.assistant_id)) {
        // Only the caller's own threads: another user's thread is not theirs to delete.
        if (await storage.threads.delete(threadId, scopeOf(c))) await storage.checkpointer.deleteThread(threadId);
      }
    }
    await storage.assistants.delete(a.assistant_id);
    return c.body(null, 204);
  });

  app.get("/:id/graph", async (c) => {
    const a = await resolveAssistant(deps, c.req.param("id"), scopeOf(c));
    const graph = await assistantGraph(deps, a);
    const xray = c.req.query("xray");
    const drawable = await graph.getGraphAsync({
      ...a.config,
      xray: xray === "true" ? true : xray && /^\d+$/.test(xray) ? Number(xray) : undefined,
    });
    return c.json(drawable.toJSON());
  });

  app.get("/:id/schemas", async (c) => {
    const a = await resolveAssistant(deps, c.req.param("id"), scopeOf(c));
    return c.json(await graphSchemas(a.graph_id, await assistantGraph(deps, a)));
  });

  const subgraphs = async (c: Context<AppEnv>, namespace?: string, recurse?: boolean) => {
    const a = await resolveAssistant(deps, c.req.param("id")!, scopeOf(c));
    const graph = await assistantGraph(deps, a);
    const out: Record<string, unknown> = {};
    // LangGraph JS's shape: per namespace `{ state, input, output, config }` (not a GraphSchema).
    for await (const [ns, sub] of graph.getSubgraphsAsync(namespace, recurse)) {
      const g = await graphSchemas(ns, sub);
      out[ns] = { state: g.state_schema, input: g.input_schema, output: g.output_schema, config: g.config_schema };
    }
    return out;
  };
  app.get("/:id/subgraphs", async (c) => c.json(await subgraphs(c, undefined, c.req.query("recurse") === "true")));
  app.get(
    "/:id/subgraphs/:ns",
    async (c) => c.json(await subgraphs(c, c.req.param("ns"), c.req.query("recurse") === "true")),
  );

  app.post("/:id/versions", async (c) => {
    const b = parseBody(s.assistantVersions, await jsonBody(c));
    const a = await resolveAssistant(deps, c.req.param("id"), scopeOf(c));
    return c.json(await storage.assistants.versions(a.assistant_id, b));
  });

  app.post("/:id/latest", async (c) => {
    const b = parseBody(s.assistantLatest, await jsonBody(c));
    const a = await writable(deps, c, "change the latest version of");
    const updated = await storage.assistants.setLatest(a.assistant_id, b.version);
    if (!updated) throw notFound("Assistant version", `${a.assistant_id}@${b.version}`);
    return c.json(updated);
  });

  return app;
}

/** The graph of an assistant (a factory gets the assistant's config and ids). */
function assistantGraph(deps: ServerDeps, a: Assistant): Promise<CompiledGraph> {
  const config = (a.config ?? {}) as { configurable?: Record<string, unknown> };
  return deps.graphs.get(a.graph_id, {
    ...config,
    configurable: { ...(config.configurable ?? {}), assistant_id: a.assistant_id, graph_id: a.graph_id },
  });
}

export function pick<T extends object>(o: T, fields: string[]): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (f in o) out[f] = (o as Record<string, unknown>)[f];
  return out as Partial<T>;
}
