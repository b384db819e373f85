/**
 * The Agent API server of a host, from the project: its graphs and default assistants, the
 * identity plugin that signs callers in, the chat UI, and the MCP and A2A endpoints (which
 * read the bundle served now, so a dev reload shows in the tools and the cards). The rest of
 * the server's options (settings from the environment, tracing, the sandboxes' hook) come
 * from the host.
 *
 * @example
 * const modules = await loadServerModules();
 * const server = await buildAgentServer({ host: opts, modules, storage, graphs, current: () => bundle, settings: () => ({ log }) });
 */
import type { Hono } from "hono";
import { type Env, type PluginDriver, type ServerLog, VERSION } from "../../kernel/index.ts";
import type { Bundle } from "../../bundle/index.ts";
import type { Storage } from "../../storage/index.ts";
import type { AgentServer, AgentServerOptions, DisabledRoutes } from "../app.ts";
import { projectAssistants, type ProjectGraphs } from "./project-graphs.ts";

/**
 * The server's modules, loaded together (while storage opens). Literal imports, so the
 * executable's bundler sees them.
 */
export async function loadServerModules() {
  const [app, node, auth, ui, studio, protocols] = await Promise.all([
    import("../app.ts"),
    import("./node.ts"),
    import("../../auth/index.ts"),
    import("../routes/ui.ts"),
    import("../routes/studio.ts"),
    import("../protocols/routes.ts"),
  ]);
  return {
    createAgentServer: app.createAgentServer,
    listen: node.listen,
    createAuthenticator: auth.createAuthenticator,
    identityPluginFor: auth.identityPluginFor,
    ui,
    studio,
    protocolRoutes: protocols.protocolRoutes,
  };
}

export type ServerModules = Awaited<ReturnType<typeof loadServerModules>>;

export interface AgentServerBuild {
  host: {
    bundle: Bundle;
    driver: PluginDriver;
    env: Env;
    mode: "dev" | "serve";
    log: ServerLog;
    langgraphAuth?: { module: string; exportName: string; studioBypass?: boolean };
  };
  modules: ServerModules;
  storage: Storage;
  graphs: ProjectGraphs;
  /** A LangGraph.js project's `http.app` (mounted before the API) and `http.disable_*` switches. */
  langgraph?: { app: unknown | null; disable: DisabledRoutes; graphUi?: Hono | null };
  /** The bundle served now (a dev reload swaps it). */
  current: () => Bundle;
  /** The server's other options; read after auth, the UI and the endpoints are set up (a bad setting fails then). */
  settings: () => Omit<
    AgentServerOptions,
    | "graphs"
    | "defaultAssistants"
    | "storage"
    | "authenticate"
    | "langgraphAuth"
    | "ui"
    | "studio"
    | "extraRoutes"
    | "disable"
  >;
}

/** Creates the host's Agent API server (storage open, workers started). */
export async function buildAgentServer(o: AgentServerBuild): Promise<AgentServer> {
  const { host: opts, modules: m } = o;
  const provider = opts.bundle.config.auth?.provider ?? null;
  // The configured provider's plugin: its sign-in kind for the protocol cards, its browser module for the chat UI.
  const identityPlugin = provider === null ? null : m.identityPluginFor(opts.driver, provider);
  const uiIdentity = identityPlugin ? { name: identityPlugin.name, ...identityPlugin.identity } : null;
  const graphs = o.graphs.loaders(opts.bundle, opts.env);
  // LangGraph custom auth stands in for the platform key (no `[auth]`); an identity plugin still runs first.
  const lgAuth = opts.langgraphAuth;
  const authenticate = lgAuth && provider === null ? undefined : m.createAuthenticator({
    driver: opts.driver,
    config: opts.bundle.config,
    env: opts.env,
    mode: opts.mode,
  });
  const uiSettings = m.ui.uiSettings(opts.bundle.config, opts.env, { identity: uiIdentity });
  const ui = opts.bundle.config.frontend.enabled || opts.mode === "dev"
    ? m.ui.uiRoutes({ settings: uiSettings, identity: uiIdentity, log: opts.log })
    : undefined;
  let studio: AgentServerOptions["studio"];
  if (m.studio.studioEnabled(opts.env, opts.mode)) {
    m.studio.assertStudioProtected({ mode: opts.mode, provider, public: identityPlugin?.identity.public });
    studio = m.studio.studioRoutes({
      log: opts.log,
      settings: m.studio.studioSettings(uiSettings.auth),
      identity: uiIdentity,
    });
  }
  const extraRoutes = m.protocolRoutes({
    version: VERSION,
    name: opts.bundle.config.agent.name,
    auth: identityPlugin?.identity.signIn === "none" ? "none" : identityPlugin ? "bearer" : "api-key",
    defaultAssistant: () => o.current().config.agent.name,
    skills: (
      a,
    ) => (a.graph_id === "agent"
      ? o.current().config.skills.map((s) => ({ name: s.name, description: s.description }))
      : []),
  });
  return await m.createAgentServer({
    graphs,
    defaultAssistants: projectAssistants(opts.bundle, opts.env),
    storage: o.storage,
    authenticate,
    langgraphAuth: lgAuth,
    ui,
    studio,
    // LangGraph mounts a project's http.app after auth and before its API: its routes win a clash.
    extraRoutes: o.langgraph?.app ? [{ path: "/", app: o.langgraph.app as Hono<any> }, ...extraRoutes] : extraRoutes,
    ...(o.langgraph ? { disable: o.langgraph.disable } : {}),
    ...(o.langgraph?.graphUi ? { graphUi: o.langgraph.graphUi } : {}),
    ...o.settings(),
  });
}
