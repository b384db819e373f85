/**
 * `agentcli deploy [--config <path>] [--dry-run] [--target <name>]` (spec 4.1): validate,
 * bundle, and ship to a deploy target plugin (beta; default `platform`). Every invocation
 * builds anew and creates a new revision.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join, relative } from "node:path";
import {
  agentcliError,
  ConfigInvalid,
  DeployCredentialsMissing,
  DeployJsonNeedsDryRun,
  DeployPublicUnconfirmed,
  type DeployRelease,
  DeployTargetUnhandled,
  DeployTargetUnknown,
  type Env,
  LangGraphPackagesUnprovided,
  PlatformUrlEnvInvalid,
  PlatformUrlFlagInvalid,
  type Plugin,
  type PluginDriver,
  unprovidedPackages,
} from "../kernel/index.ts";
import type { LoadedProject } from "../config/index.ts";
import type { BundleManifest } from "../bundle/index.ts";
import { type CommandSpec, CONFIG_FLAG, parseArgs, renderHelp } from "./args.ts";
import type { CliContext } from "./context.ts";
import type { SecretPlan } from "./deploy-secrets.ts";

/** Where `deploy` sends the bundle when neither --platform-url nor $AGENTCLI_PLATFORM_URL is set (the deploy plugin's default). */
export const DEFAULT_PLATFORM_URL = "http://127.0.0.1:8100";

const spec = {
  name: "deploy",
  usage:
    "agentcli deploy [--config <path>] [--target <name>] [--dry-run] [--json] [--yes] [--platform-url <url>] [--gate] [--gate-evals] [--canary <percent>] [--promote] [--abort] [--rollback <revision-id>]",
  summary:
    "Bundle the project and deploy it as a new revision (beta). --dry-run validates, bundles and prints a summary without touching the network.",
  flags: {
    config: CONFIG_FLAG,
    target: {
      type: "string",
      placeholder: "<name>",
      default: "platform",
      description: 'Deploy target plugin: "platform" (a control plane), "docker" (a build context), or a plugin\'s',
    },
    dryRun: { type: "boolean", description: "Validate and bundle, print a summary; no network" },
    json: { type: "boolean", description: "With --dry-run: print the summary as JSON (for CI)" },
    yes: { type: "boolean", description: "Confirm pushing a public (anonymous) deployment without a prompt" },
    platformUrl: {
      type: "string",
      placeholder: "<url>",
      description:
        `Control plane address (default: $AGENTCLI_PLATFORM_URL, or ${DEFAULT_PLATFORM_URL} when it is unset)`,
    },
    gate: {
      type: "boolean",
      description: "The new revision takes traffic only after a smoke run through the Agent API succeeds",
    },
    gateEvals: {
      type: "boolean",
      description: "The new revision takes traffic only after the project's eval cases (evals/) pass against it",
    },
    canary: {
      type: "int",
      placeholder: "<percent>",
      min: 1,
      max: 99,
      description:
        "Send this percentage of new threads to the new revision (sticky per thread) until --promote or --abort",
    },
    promote: {
      type: "boolean",
      description: "Promote the deployment's running canary to all traffic (no new revision)",
    },
    abort: { type: "boolean", description: "Abort the deployment's running canary (no new revision)" },
    rollback: {
      type: "string",
      placeholder: "<revision-id>",
      description: "Serve an earlier revision's build again, as a new revision (no rebuild)",
    },
  },
} satisfies CommandSpec<Record<string, import("./args.ts").FlagSpec>>;

export const BETA_NOTICE =
  "agentcli deploy is in beta: APIs, the config format and behavior may change between releases.";

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  const [{ loadPlugins }, { loadProject }, { buildBundle }] = await Promise.all([
    import("../kernel/index.ts"),
    import("../config/index.ts"),
    import("../bundle/index.ts"),
  ]);
  const dryRun = Boolean(flags.dryRun);
  if (flags.json && !dryRun) throw agentcliError(DeployJsonNeedsDryRun);
  if (!flags.json) ctx.io.err(BETA_NOTICE);
  const platformUrl = flags.platformUrl as string | undefined;
  if (platformUrl !== undefined) checkPlatformUrl(platformUrl, "--platform-url");
  const driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: ctx.cwd });
  const env: Env = { ...ctx.env, ...(platformUrl ? { AGENTCLI_PLATFORM_URL: platformUrl } : {}) };
  const targetName = flags.target as string;
  const { releaseAction, releaseOf, runReleaseAction } = await import("./release.ts");
  const releaseFlags = {
    gate: Boolean(flags.gate),
    gateEvals: Boolean(flags.gateEvals),
    canary: flags.canary as number | undefined,
    promote: Boolean(flags.promote),
    abort: Boolean(flags.abort),
    rollback: flags.rollback as string | undefined,
  };
  const action = releaseAction(releaseFlags, targetName);
  const project = await loadProject(flags.config as string, {
    driver,
    env,
    requireEnv: !dryRun && !action,
    cwd: ctx.cwd,
  });
  if (action) {
    const base = (project.env.AGENTCLI_PLATFORM_URL || DEFAULT_PLATFORM_URL).replace(/\/+$/, "");
    if (!platformUrl && project.env.AGENTCLI_PLATFORM_URL) checkPlatformUrl(base, "AGENTCLI_PLATFORM_URL");
    const name = project.config.agent.name;
    await runReleaseAction(ctx, { action, rollback: releaseFlags.rollback, name, env: project.env, base });
    return 0;
  }
  const clear = project.deployProblems ?? [];
  if (clear.length) {
    const path = project.config.langgraph?.file ?? project.configPath;
    throw agentcliError(ConfigInvalid, { path, count: clear.length }, { diagnostics: clear });
  }
  const target = deployTarget(driver, targetName);
  // A LangGraph.js project's packages: agentcli lends its own; the others are the target's build to install.
  const lg = project.config.langgraph;
  const unprovided = lg && !target.deploy.installsPackages ? unprovidedPackages(lg) : [];
  const packagesRefusal = lg && unprovided.length
    ? agentcliError(LangGraphPackagesUnprovided, { config: lg.file, packages: unprovided, target: targetName })
    : null;
  if (packagesRefusal && !dryRun) throw packagesRefusal;
  // Exactly what the deployment will store: the dry run lists these names, a real deploy ships these values.
  const { planSecrets } = await import("./deploy-secrets.ts");
  const plan = planSecrets({
    config: project.config,
    driver,
    target: target.deploy,
    dotenv: project.secrets,
    env: project.env,
  });
  const { bytes, manifest } = await buildBundle(project, { driver, version: ctx.version });
  const bundlePath = join(project.root, ".agentcli", "bundle.tgz");
  writeAtomic(bundlePath, bytes);
  const shipment = { project, driver, target, targetName, bytes, plan };
  if (dryRun) {
    const refusals = packagesRefusal ? [packagesRefusal.message] : [];
    await printDryRun(ctx, { ...shipment, manifest, bundlePath, json: Boolean(flags.json), refusals });
    return 0;
  }
  for (const w of project.warnings) ctx.io.err(`warning: ${w.file}${w.line ? `:${w.line}` : ""}: ${w.message}`);
  if (!platformUrl && project.env.AGENTCLI_PLATFORM_URL) {
    checkPlatformUrl(project.env.AGENTCLI_PLATFORM_URL, "AGENTCLI_PLATFORM_URL");
  }
  const missing = missingTargetEnv(project, target);
  if (missing.length) {
    throw agentcliError(DeployCredentialsMissing, { names: missing, reason: target.deploy.envReason });
  }
  if (!(await confirmPublic(ctx, { project, driver, yes: Boolean(flags.yes) }))) {
    ctx.io.err("Not deployed.");
    return 1;
  }
  await ship(ctx, { ...shipment, release: await releaseOf(releaseFlags, { project, ctx }) });
  return 0;
}

type DeployPlugin = Extract<Plugin, { kind: "deploy" }>;

/** What a deploy ships, and to where. */
interface Shipment {
  project: LoadedProject;
  driver: PluginDriver;
  target: DeployPlugin;
  targetName: string;
  bytes: Uint8Array;
  plan: SecretPlan;
}

/** The deploy plugin of `--target`; a user error listing the targets there are. */
function deployTarget(driver: PluginDriver, name: string): DeployPlugin {
  const target = driver.provider("deploy", name);
  if (target?.kind !== "deploy") {
    throw agentcliError(DeployTargetUnknown, { target: name, known: driver.specs("deploy").map((s) => s.target) });
  }
  return target;
}

/** The deploy target's own variables (PLATFORM_API_KEY) that are not set: a dry run lists them with the project's. */
function missingTargetEnv(project: LoadedProject, target: DeployPlugin): string[] {
  return target.deploy.env.filter((v) => !project.env[v]);
}

/** `--dry-run`: the summary of what would be deployed, as text or JSON; nothing leaves the machine. */
async function printDryRun(
  ctx: CliContext,
  opts: Shipment & { manifest: BundleManifest; bundlePath: string; json: boolean; refusals: string[] },
): Promise<void> {
  const { project, driver, target, targetName, bytes } = opts;
  const missingTarget = missingTargetEnv(project, target);
  const { makeSummary, renderSummary } = await import("./deploy-summary.ts");
  const summary = makeSummary({
    config: project.config,
    manifest: opts.manifest,
    driver,
    target: { name: targetName, description: target.description ?? target.name },
    bundlePath: relative(ctx.cwd, opts.bundlePath) || opts.bundlePath,
    bundleBytes: bytes.length,
    bundleSha256: createHash("sha256").update(bytes).digest("hex"),
    secrets: opts.plan,
    missingEnv: [
      ...project.missingEnv,
      ...(missingTarget.length
        ? [{ variables: missingTarget, reason: target.deploy.envReason ?? `the deploy target "${targetName}"` }]
        : []),
    ],
    warnings: project.warnings,
    refusals: opts.refusals,
  });
  ctx.io.out(
    opts.json ? JSON.stringify(summary, null, 2) : `Dry run: nothing was deployed.\n\n${renderSummary(summary)}`,
  );
}

/**
 * A public deployment (an identity provider marked `public`) goes out only when confirmed:
 * `--yes`, or a yes at the terminal. False when the user said no.
 */
async function confirmPublic(
  ctx: CliContext,
  opts: { project: LoadedProject; driver: PluginDriver; yes: boolean },
): Promise<boolean> {
  const { driver } = opts;
  const authProvider = opts.project.config.auth?.provider ?? null;
  const publicAuth = authProvider !== null && driver.spec("identity", authProvider)?.public === true;
  if (!publicAuth || opts.yes) return true;
  if (!ctx.io.interactive) {
    const perUser = driver.specs("identity").filter((s) => s.perUser).map((s) => s.provider);
    throw agentcliError(DeployPublicUnconfirmed, { provider: authProvider, perUser });
  }
  return ctx.io.confirm(
    `[auth] provider = "${authProvider}": anyone with the URL will be able to call this agent. Push it?`,
  );
}

/** Hands the bundle and secrets to the target's plugin, then prints where it went and what to do next. */
async function ship(ctx: CliContext, opts: Shipment & { release: DeployRelease | null }): Promise<void> {
  const { project, driver, target, targetName } = opts;
  const { isCompiled } = await import("../kernel/index.ts");
  const result = await driver.runProvider({ hook: "deploy:target", kind: "deploy", key: targetName }, {
    target: targetName,
    bundle: opts.bytes,
    name: project.config.agent.name,
    secrets: opts.plan.secrets,
    // .env under the environment (and --platform-url): a PLATFORM_API_KEY in .env counts, as the check above and its hint say.
    env: project.env,
    projectDir: project.root,
    executable: isCompiled() ? process.execPath : null,
    version: ctx.version,
    log: { info: (m) => ctx.io.err(m), warn: (m) => ctx.io.err(`warning: ${m}`) },
    signal: ctx.shutdownSignal,
    ...(opts.release ? { release: opts.release } : {}),
  });
  if (!result) throw agentcliError(DeployTargetUnhandled, { plugin: target.name, target: targetName });
  ctx.io.out(
    `Deployed "${project.config.agent.name}" to ${targetName}: revision ${result.revisionId} is ${result.status}.`,
  );
  if (result.url) ctx.io.out(`URL: ${result.url}`);
  for (const line of result.nextSteps ?? []) ctx.io.out(line);
  if (result.url) {
    const { postDeploySetup } = await import("../auth/index.ts");
    for (const line of postDeploySetup(project.config, result.url, driver)) ctx.io.out(line);
  }
}

/** A control plane address must be an http(s) URL; anything else is the user's typo, not an unreachable server. */
export function checkPlatformUrl(value: string, from: "--platform-url" | "AGENTCLI_PLATFORM_URL"): void {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch { /* not a URL */ }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    // --platform-url is the command line (exit 2); AGENTCLI_PLATFORM_URL is the environment (exit 1).
    throw agentcliError(from === "--platform-url" ? PlatformUrlFlagInvalid : PlatformUrlEnvInvalid, {
      value,
      example: DEFAULT_PLATFORM_URL,
    });
  }
}

function writeAtomic(path: string, bytes: Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, path);
}
