/** `GET /info`: what this server is and runs (mounted by ./public.ts). */
import type { Hono } from "hono";
import { VERSION } from "../../kernel/index.ts";
import type { Storage } from "../../storage/index.ts";
import type { ServerRole } from "../../engine/index.ts";
import type { AppEnv } from "../http/auth-middleware.ts";
import type { AgentServerOptions } from "../app.ts";

/** What `GET /info` tells of this server, besides its options (graphs are read per request: a reload changes them). */
export interface InfoFields {
  graphs: () => string[];
  storage: Storage["kind"];
  redis: boolean;
  role: ServerRole;
  encryption: { at_rest: string; json_keys: string[] } | null;
  store_search: Awaited<ReturnType<Storage["store"]["searchMode"]>>;
}

/** `GET /info`. */
export function mountInfoRoute(app: Hono<AppEnv>, opts: AgentServerOptions, info: InfoFields): void {
  app.get("/info", (c) =>
    c.json({
      version: VERSION,
      agentcli: VERSION,
      graphs: info.graphs(),
      storage: info.storage,
      redis: info.redis,
      role: info.role,
      workers: info.role === "api" ? 0 : opts.workers ?? 8,
      encryption: info.encryption,
      store_search: info.store_search,
      tracing: opts.tracer ? { exporter: opts.tracer.exporter, project: opts.tracer.project } : null,
      flags: { assistants: true, crons: true, langsmith: false, store: true, strict_resume: true },
      ...opts.info,
    }));
}
