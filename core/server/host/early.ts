/**
 * `dev`'s early listener: it answers `GET /ok` at once while the server behind it loads, and
 * hands every other request to the server when it is up (a 503 if it failed to start).
 *
 * @example
 * const early = await listenFirst({ port: 2024, host: "127.0.0.1", env: process.env });
 * const host = await hostBundle({ ...options, early });
 */
import type { Env } from "../../kernel/index.ts";
import type { Listening } from "./node.ts";

/** A listener that answers `GET /ok` while the server behind it loads. */
export interface EarlyListener {
  listening: Listening;
  /** Hands every request to `fetch` (null: the server failed to start; waiting requests get a 503). */
  serve(fetch: ((req: Request, ...runtime: unknown[]) => Response | Promise<Response>) | null): void;
}

/**
 * `dev` listens before anything else loads: `GET /ok` answers at once, and every other request
 * waits until the project is validated and storage, the Agent API and the UI are up (or gets
 * a 503 if they fail to start). A taken port is reported before any of that work.
 */
export async function listenFirst(opts: { port: number; host: string; env: Env }): Promise<EarlyListener> {
  const { listen } = await import("./node.ts");
  const { listenSettings } = await import("./listen-settings.ts");
  let handler: ((req: Request, ...runtime: unknown[]) => Response | Promise<Response>) | null = null;
  let started = false;
  const waiting: Array<() => void> = [];
  const listening = await listen({
    // The runtime's values (the socket) go on to the server: usage limits read the client's address.
    fetch: (req: Request, ...runtime: unknown[]) => {
      if (handler) return handler(req, ...runtime);
      if ((req.method === "GET" || req.method === "HEAD") && new URL(req.url).pathname === "/ok") {
        return Response.json({ ok: true });
      }
      return new Promise<void>((r) => (started ? r() : waiting.push(r))).then(() =>
        handler
          ? handler(req, ...runtime)
          : Response.json({ detail: "Cannot serve the request: the server failed to start (see its log)" }, {
            status: 503,
          })
      );
    },
  }, { port: opts.port, host: opts.host, ...listenSettings(opts.env, { mode: "dev", bind: opts.host }) });
  return {
    listening,
    serve(fetch) {
      handler = fetch;
      started = true;
      for (const wake of waiting.splice(0)) wake();
    },
  };
}

/**
 * Behind an early listener the server's modules load in steps, with a turn of the event loop
 * between them, so `/ok` never waits behind one long synchronous evaluation of the whole
 * module graph (a module and its imports evaluate in one go). Literal imports, so the
 * executable's bundler sees them.
 */
export async function loadInSteps(): Promise<void> {
  const turn = () => new Promise<void>((r) => setImmediate(r));
  await import("zod"), await turn();
  await import("@langchain/core/runnables"), await turn();
  await import("@langchain/langgraph-checkpoint"), await turn();
  await import("@electric-sql/pglite"), await turn();
  await import("../../storage/index.ts"), await turn();
  await import("@langchain/langgraph"), await turn();
  await import("hono"), await turn();
  await import("../app.ts"), await turn();
  await import("../../auth/index.ts"), await turn();
  await import("../protocols/routes.ts"), await turn();
}
