/**
 * `agentcli platform serve` runs the control plane; `agentcli platform admin <action>`
 * creates tenants, API keys (printed once), integrations, provider tokens and listeners in
 * its database. The CLI only parses flags; the work is in `core/platform/`.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  agentcliError,
  PlatformAdminApiUrlMissing,
  PlatformAdminArgMissing,
  PlatformAdminArgUnexpected,
  PlatformAdminComputeTypeInvalid,
  PlatformAdminFlagMissing,
  PlatformAdminKindInvalid,
  PlatformAdminUnknownAction,
  PlatformDatabaseBusy,
  PlatformKubeconfigUnreadable,
  PlatformModeInvalid,
  PlatformPublicUrlInvalid,
  PlatformServeRunning,
  PlatformSubcommandUnknown,
  PlatformTokenMissing,
} from "../kernel/index.ts";
import { lockHolder } from "../storage/index.ts";
import type { CliContext } from "./context.ts";
import { type CommandSpec, type FlagSpec, hostFlag, parseArgs, portFlag, renderHelp } from "./args.ts";
import { scaffoldFiles } from "./scaffold.ts";
import { type AgentTemplate, RESEARCH_TEMPLATE } from "../platform/index.ts";

const SERVE = {
  name: "platform serve",
  usage:
    "agentcli platform serve [--port <int>] [--host <addr>] [--data-dir <dir>] [--mode cloud|self-hosted] [--public-url <url>]",
  summary:
    'Run the control plane (REST API of deployments, revisions, listeners) and its local listener.\nStorage: PostgreSQL from $DATABASE_URL, otherwise an embedded database in --data-dir (then "platform admin" runs only while this is stopped).\nOn first start it creates the tenant "default" and prints its API key once.\nPlugins it is started with (--plugin, AGENTCLI_PLUGINS) build revisions and load in the local listener\'s revision processes.\nLimits: AGENTCLI_PLATFORM_MAX_BODY_MB (1), AGENTCLI_PLATFORM_MAX_UPLOAD_MB (256), AGENTCLI_PLATFORM_MAX_UNPACKED_MB (512), AGENTCLI_PLATFORM_MAX_ARCHIVE_ENTRIES (10000).',
  flags: {
    port: portFlag(8100),
    host: hostFlag("127.0.0.1"),
    dataDir: { type: "string", placeholder: "<dir>", description: "Data folder", default: ".agentcli-platform" },
    mode: {
      type: "string",
      placeholder: "cloud|self-hosted",
      description: "Which sources are accepted (cloud: repohost, internal_*; self-hosted: external_container)",
      default: "cloud",
    },
    publicUrl: {
      type: "string",
      placeholder: "<url>",
      description: "Address clients and k8s clusters reach this server at (upload URLs, bundle downloads)",
    },
  },
} satisfies CommandSpec<Record<string, FlagSpec>>;

const ADMIN_FLAGS = {
  dataDir: {
    type: "string",
    placeholder: "<dir>",
    description: "Data folder of the control plane",
    default: ".agentcli-platform",
  },
  tenant: { type: "string", placeholder: "<id|name>", description: "Tenant the resource belongs to" },
  user: { type: "string", placeholder: "<id>", description: "User the key (or token) belongs to", default: "admin" },
  kind: { type: "string", placeholder: "repohost|forge", description: "Integration kind" },
  apiUrl: {
    type: "string",
    placeholder: "<url>",
    description: "API address of the integration (repohost default https://api.github.com)",
  },
  tokenEnv: {
    type: "string",
    placeholder: "<VAR>",
    description: "Environment variable holding the integration's access token",
  },
  providerId: { type: "string", placeholder: "<id>", description: "Token provider" },
  label: { type: "string", placeholder: "<text>", description: "provider_account_label of the token" },
  scope: { type: "string", placeholder: "<scope>", description: "Token scope (repeatable)", multiple: true },
  expiresInDays: { type: "int", placeholder: "<days>", description: "Token lifetime", min: 1 },
  default: { type: "boolean", description: "Make the token the default for its provider" },
  computeType: { type: "string", placeholder: "k8s|local", description: "Listener compute type", default: "k8s" },
  computeId: { type: "string", placeholder: "<id>", description: "Listener compute id (for k8s, the cluster name)" },
  namespace: {
    type: "string",
    placeholder: "<ns>",
    description: "k8s namespace the listener may use (repeatable)",
    multiple: true,
  },
  kubeconfig: {
    type: "string",
    placeholder: "<file>",
    description: "Kubeconfig the control plane applies k8s manifests with",
  },
  listener: { type: "string", placeholder: "<id>", description: "Listener id" },
} satisfies Record<string, FlagSpec>;

const ADMIN = {
  name: "platform admin",
  usage:
    "agentcli platform admin <create-tenant <name>|list-tenants|create-key|revoke-key <id>|create-integration|create-token|create-listener|set-kubeconfig> [options]",
  summary:
    "Administer the control plane's database (run it where the server's data folder or $DATABASE_URL is).\nThe embedded database (no $DATABASE_URL) opens in one process at a time: stop \"agentcli platform serve\" first.",
  flags: ADMIN_FLAGS,
  positionals: [{ name: "action", description: "What to do", required: true }, {
    name: "arg",
    description: "Argument of the action",
  }],
} satisfies CommandSpec<typeof ADMIN_FLAGS>;

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "serve") return serve(rest, ctx);
  if (sub === "admin") return admin(rest, ctx);
  if (sub === "usage") return (await import("./platform-usage.ts")).usage(rest, ctx);
  if (!sub || sub === "--help" || sub === "-h") {
    const { USAGE_COMMAND } = await import("./platform-usage.ts");
    ctx.io.out(
      `Run and administer the control plane; read a deployment's usage.\n\nUsage:\n  ${SERVE.usage}\n  ${ADMIN.usage}\n  ${USAGE_COMMAND.usage}\n\nSee "agentcli platform serve --help", "agentcli platform admin --help" and "agentcli platform usage --help".`,
    );
    return sub ? 0 : 1;
  }
  throw agentcliError(PlatformSubcommandUnknown, { subcommand: sub });
}

async function serve(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, help } = parseArgs(SERVE, argv);
  if (help) return ctx.io.out(renderHelp(SERVE)), 0;
  if (flags.mode !== "cloud" && flags.mode !== "self-hosted") {
    throw agentcliError(PlatformModeInvalid, { mode: String(flags.mode) });
  }
  const { platformLimits } = await import("../platform/index.ts");
  const limits = platformLimits(ctx.env);
  const dataDir = resolve(ctx.cwd, flags.dataDir);
  // Absolute: builds load them from a checkout's folder, revision processes from theirs.
  const plugins = ctx.pluginPaths.map((p) => (p ? resolve(ctx.cwd, p) : p));
  // A plugin file that does not load fails here, not in every revision.
  await (await import("../kernel/index.ts")).loadPlugins(await ctx.builtinPlugins(), { paths: plugins });
  // The embedded database's lock (core/storage/lock.ts) names the one already running here,
  // before this one binds its port.
  const other = ctx.env.DATABASE_URL ? null : lockHolder(join(dataDir, "db"));
  if (other) {
    throw agentcliError(PlatformServeRunning, { dataDir, pid: other });
  }
  const settings = (await import("../server/index.ts")).listenSettings(ctx.env, {
    mode: "platform",
    bind: flags.host,
  });
  // The control plane answers to the name of its --public-url (revisions on a cluster reach it there).
  if (flags.publicUrl && !settings.allowedHosts.any) settings.allowedHosts.names.push(publicHostName(flags.publicUrl));
  let platform: Awaited<ReturnType<typeof import("../platform/index.ts").openPlatform>> | null = null;
  try {
    const { openPlatform } = await import("../platform/index.ts");
    // Binds the port first: a taken port stops it before the database, revisions or the default tenant.
    platform = await openPlatform({
      listen: { port: flags.port, host: flags.host, settings },
      dataDir,
      databaseUrl: ctx.env.DATABASE_URL || undefined,
      mode: flags.mode,
      publicUrl: flags.publicUrl,
      plugins,
      limits,
      driver: await (await import("../kernel/index.ts")).loadPlugins(await ctx.builtinPlugins(), {
        paths: plugins,
      }),
      builders: projectBuilders({ ...ctx, pluginPaths: plugins }),
      localHost: flags.host === "0.0.0.0" ? "127.0.0.1" : flags.host,
      onError: (err) => ctx.io.err(`platform: ${err instanceof Error ? err.stack ?? err.message : String(err)}`),
    });
    const db = platform.sql;
    const { listTenants, createTenant, createApiKey } = await import("../platform/index.ts");
    if (!(await listTenants(db)).length) {
      // Tenant and key in one transaction: never a default tenant whose key nobody saw.
      // Another replica starting on the same database may create it first: then it printed the key.
      const created = await db.transaction(async (tx) => {
        const tenant = await createTenant(tx, "default");
        return { tenant, key: (await createApiKey(tx, { tenantId: tenant.id, userId: "admin" })).key };
      }).catch(async (err) => {
        if ((await listTenants(db)).some((x) => x.name === "default")) return null;
        throw err;
      });
      if (created) {
        ctx.io.err(
          `Created tenant "default" (${created.tenant.id}). Its API key, shown only now:\n  ${created.key}\nUse it as PLATFORM_API_KEY.`,
        );
      }
    }
    const { url } = platform.listening!;
    ctx.io.err(
      `Control plane (${flags.mode}) listening on ${url} (data: ${ctx.env.DATABASE_URL ? "PostgreSQL" : dataDir})`,
    );
    await new Promise<void>((
      r,
    ) => (ctx.shutdownSignal.aborted ? r() : ctx.shutdownSignal.addEventListener("abort", () => r(), { once: true })));
    ctx.io.err("Stopping the control plane...");
    return 0;
  } finally {
    await platform?.close();
  }
}

/** The host name of `--public-url` (lower case, without port or brackets). */
function publicHostName(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  } catch {
    throw agentcliError(PlatformPublicUrlInvalid, { url });
  }
}

/** Each action: whether it takes the positional argument (and its name), and the flags it needs. */
const ACTIONS: Record<string, { arg?: string; needs: Array<keyof typeof ADMIN_FLAGS> }> = {
  "create-tenant": { arg: "<name>", needs: [] },
  "list-tenants": { needs: [] },
  "create-key": { needs: ["tenant"] },
  "revoke-key": { arg: "<key id>", needs: [] },
  "create-integration": { needs: ["tenant", "kind", "tokenEnv"] },
  "create-token": { needs: ["tenant", "providerId"] },
  "create-listener": { needs: ["tenant", "computeId"] },
  "set-kubeconfig": { needs: ["listener", "kubeconfig"] },
};

const FLAG_NAMES: Record<string, string> = {
  tenant: "--tenant",
  kind: "--kind",
  tokenEnv: "--token-env",
  providerId: "--provider-id",
  computeId: "--compute-id",
  listener: "--listener",
  kubeconfig: "--kubeconfig",
  apiUrl: "--api-url",
};

async function admin(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, positionals, help } = parseArgs(ADMIN, argv);
  if (help) return ctx.io.out(renderHelp(ADMIN)), 0;
  const [action, arg] = positionals as [string, string | undefined];
  // Everything about the command line is checked before the database is opened.
  const spec = Object.hasOwn(ACTIONS, action) ? ACTIONS[action]! : null;
  if (!spec) {
    throw agentcliError(PlatformAdminUnknownAction, { action, actions: Object.keys(ACTIONS), usage: ADMIN.usage });
  }
  if (spec.arg && !arg) throw agentcliError(PlatformAdminArgMissing, { action, arg: spec.arg });
  if (!spec.arg && arg !== undefined) throw agentcliError(PlatformAdminArgUnexpected, { action, arg });
  for (const name of spec.needs) {
    if (!flags[name]) throw agentcliError(PlatformAdminFlagMissing, { action, flag: FLAG_NAMES[name]! });
  }
  let token = "";
  if (action === "create-integration") {
    if (flags.kind !== "repohost" && flags.kind !== "forge") {
      throw agentcliError(PlatformAdminKindInvalid, { action, kind: String(flags.kind) });
    }
    if (flags.kind === "forge" && !flags.apiUrl) throw agentcliError(PlatformAdminApiUrlMissing, { action });
    token = ctx.env[flags.tokenEnv!] ?? "";
    if (!token) {
      throw agentcliError(PlatformTokenMissing, { variable: flags.tokenEnv! });
    }
  }
  if (action === "create-listener" && flags.computeType !== "k8s" && flags.computeType !== "local") {
    throw agentcliError(PlatformAdminComputeTypeInvalid, { action, computeType: String(flags.computeType) });
  }
  let kubeconfig: string | null = null;
  if (flags.kubeconfig && (action === "create-listener" || action === "set-kubeconfig")) {
    try {
      kubeconfig = readFileSync(resolve(ctx.cwd, flags.kubeconfig), "utf8");
    } catch {
      throw agentcliError(PlatformKubeconfigUnreadable, { action, path: flags.kubeconfig });
    }
  }
  const dataDir = resolve(ctx.cwd, flags.dataDir);
  const running = ctx.env.DATABASE_URL ? null : lockHolder(join(dataDir, "db"));
  if (running) {
    throw agentcliError(PlatformDatabaseBusy, { dataDir, pid: running });
  }
  const { openSql, migrate } = await import("../storage/index.ts");
  const { PLATFORM_MIGRATIONS } = await import("../platform/index.ts");
  const t = await import("../platform/index.ts");
  const sql = await openSql(ctx.env.DATABASE_URL ? { url: ctx.env.DATABASE_URL } : { dataDir: join(dataDir, "db") });
  try {
    await migrate(sql, "platform", PLATFORM_MIGRATIONS);
    const tenant = async () => t.findTenant(sql, flags.tenant!);
    switch (action) {
      case "create-tenant": {
        const created = await t.createTenant(sql, arg!);
        ctx.io.out(`tenant ${created.id} ${created.name}`);
        return 0;
      }
      case "list-tenants":
        for (const x of await t.listTenants(sql)) ctx.io.out(`${x.id} ${x.name}`);
        return 0;
      case "create-key": {
        const { id, key } = await t.createApiKey(sql, { tenantId: (await tenant()).id, userId: flags.user });
        ctx.io.err(`API key ${id} for user "${flags.user}" (shown only now; only its hash is stored):`);
        ctx.io.out(key);
        return 0;
      }
      case "revoke-key":
        await t.revokeApiKey(sql, arg!);
        ctx.io.out(`revoked ${arg}`);
        return 0;
      case "create-integration": {
        const kind = flags.kind as "repohost" | "forge";
        const apiUrl = flags.apiUrl ?? "https://api.github.com";
        const row = await t.createIntegration(sql, { tenantId: (await tenant()).id, kind, apiUrl, token });
        ctx.io.out(`integration ${row.id}`);
        ctx.io.err(
          `Push webhook: POST <control plane>/v1/integrations/${row.id}/webhook, secret ${row.webhook_secret}`,
        );
        return 0;
      }
      case "create-token": {
        const row = await t.createToken(sql, {
          tenantId: (await tenant()).id,
          ownerUserId: flags.user,
          providerId: flags.providerId!,
          label: flags.label,
          scopes: flags.scope,
          isDefault: flags.default,
          expiresAt: flags.expiresInDays ? new Date(Date.now() + flags.expiresInDays * 86_400_000) : null,
        });
        ctx.io.out(`token ${row.id}`);
        return 0;
      }
      case "create-listener": {
        const row = await t.createListener(sql, {
          tenantId: (await tenant()).id,
          computeType: flags.computeType,
          computeId: flags.computeId!,
          computeConfig: flags.computeType === "k8s" ? { k8s_namespaces: flags.namespace } : {},
          version: null,
        });
        if (kubeconfig !== null) await t.setListenerKubeconfig(sql, row.id, kubeconfig);
        ctx.io.out(`listener ${row.id}`);
        return 0;
      }
      default: // set-kubeconfig
        await t.setListenerKubeconfig(sql, flags.listener!, kubeconfig!);
        ctx.io.out(`kubeconfig set for listener ${flags.listener}`);
        return 0;
    }
  } finally {
    await sql.close();
  }
}

/** The templates `internal_template` deployments name: `starter` (what `agentcli init` writes) and `research` (examples/research). */
export function platformTemplates(version: string): AgentTemplate[] {
  const starter: AgentTemplate = {
    name: "starter",
    description:
      'The project "agentcli init" creates: AGENTS.md, a review skill, no MCP servers; clients call it with x-api-key (set the PLATFORM_API_KEY secret) and it needs a model key secret',
    requiredSecrets: ["PLATFORM_API_KEY"],
    // .env holds the local secrets of a project; a deployment's come from its `secrets`.
    files: (agentName) => scaffoldFiles(agentName, version).filter((f) => f.path !== ".env"),
  };
  return [starter, RESEARCH_TEMPLATE];
}

/** Builds a `repohost` checkout or a template into a bundle with this agentcli's loader and plugins. */
export function projectBuilders(ctx: Pick<CliContext, "pluginPaths" | "version" | "builtinPlugins">) {
  return {
    templates: platformTemplates(ctx.version),
    /** A bundle made with a plugin this agentcli does not have (a third-party --plugin) cannot run here. */
    async checkBundle(manifest: { name: string; requires: { plugins: string[] } }): Promise<string | null> {
      const { loadPlugins } = await import("../kernel/index.ts");
      const driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths });
      const missing = manifest.requires.plugins.filter((name) => !driver.get(name));
      if (!missing.length) return null;
      return `bundle "${manifest.name}" needs the plugin${missing.length > 1 ? "s" : ""} ${
        missing.map((m) => `"${m}"`).join(", ")
      }, which this control plane does not have; start "agentcli platform serve" with --plugin <file> (or AGENTCLI_PLUGINS) for ${
        missing.length > 1 ? "them" : "it"
      }, or deploy without ${missing.length > 1 ? "them" : "it"}`;
    },
    async buildProject(opts: { dir: string; configPath: string; log: (message: string) => void }): Promise<Uint8Array> {
      const { loadPlugins } = await import("../kernel/index.ts");
      const { loadProject } = await import("../config/index.ts");
      const { buildBundle } = await import("../bundle/index.ts");
      const { formatUserError, isUserError } = await import("../kernel/index.ts");
      try {
        const driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: opts.dir });
        const project = await loadProject(opts.configPath, { driver, env: {}, requireEnv: false, cwd: opts.dir });
        // A credential in clear refuses the build (and is not logged as a warning first).
        const clear = project.deployProblems ?? [];
        if (clear.length) throw new Error(clear.map((d) => `${d.file}:${d.line}: ${d.message}`).join("\n"));
        for (const w of project.warnings) opts.log(`warning: ${w.file}: ${w.message}`);
        const { bytes } = await buildBundle(project, { driver, version: ctx.version });
        return bytes;
      } catch (err) {
        if (isUserError(err)) throw new Error(formatUserError(err));
        throw err;
      }
    },
  };
}
