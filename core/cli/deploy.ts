/**
 * `agentcli deploy [--config <path>] [--dry-run] [--target <name>]` (spec 4.1): validate,
 * bundle, and ship to a deploy target plugin (beta; default `platform`). Every invocation
 * builds anew and creates a new revision.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join, relative } from "node:path";
import { type Env, userError } from "../kernel/index.ts";
import { type CommandSpec, CONFIG_FLAG, parseArgs, renderHelp } from "./args.ts";
import type { CliContext } from "./context.ts";

/** Where `deploy` sends the bundle when neither --platform-url nor $AGENTCLI_PLATFORM_URL is set (the deploy plugin's default). */
export const DEFAULT_PLATFORM_URL = "http://127.0.0.1:8100";

const spec = {
  name: "deploy",
  usage: "agentcli deploy [--config <path>] [--target <name>] [--dry-run] [--json] [--yes] [--platform-url <url>]",
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
  const config = flags.config as string;
  const dryRun = Boolean(flags.dryRun);
  if (flags.json && !dryRun) {
    throw userError("ARGS_INVALID", {
      message: 'Cannot run "agentcli deploy": --json goes with --dry-run',
      hint: "agentcli deploy --dry-run --json",
    });
  }
  if (!flags.json) ctx.io.err(BETA_NOTICE);
  if (flags.platformUrl !== undefined) checkPlatformUrl(flags.platformUrl as string, "--platform-url");
  const driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: ctx.cwd });
  const env: Env = { ...ctx.env, ...(flags.platformUrl ? { AGENTCLI_PLATFORM_URL: flags.platformUrl as string } : {}) };
  const project = await loadProject(config, { driver, env, requireEnv: !dryRun, cwd: ctx.cwd });
  const targetName = flags.target as string;
  const target = driver.provider("deploy", targetName);
  if (target?.kind !== "deploy") {
    const known = driver.specs("deploy").map((s) => `"${s.target}"`).join(", ");
    throw userError("ARGS_INVALID", {
      message: `Cannot deploy: no deploy target "${targetName}"`,
      hint: `Use --target with one of ${known}, or load the plugin that provides it with --plugin.`,
    });
  }
  // The deploy target's own variables (PLATFORM_API_KEY): a dry run lists them with the project's.
  const missingTarget = target.deploy.env.filter((v) => !project.env[v]);
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
  const shownPath = relative(ctx.cwd, bundlePath) || bundlePath;
  const sha256 = createHash("sha256").update(bytes).digest("hex");

  if (dryRun) {
    const { makeSummary, renderSummary } = await import("./deploy-summary.ts");
    const summary = makeSummary({
      config: project.config,
      manifest,
      driver,
      target: { name: targetName, description: target.description ?? target.name },
      bundlePath: shownPath,
      bundleBytes: bytes.length,
      bundleSha256: sha256,
      secrets: plan,
      missingEnv: [
        ...project.missingEnv,
        ...(missingTarget.length
          ? [{ variables: missingTarget, reason: target.deploy.envReason ?? `the deploy target "${targetName}"` }]
          : []),
      ],
      warnings: project.warnings,
    });
    ctx.io.out(
      flags.json ? JSON.stringify(summary, null, 2) : `Dry run: nothing was deployed.\n\n${renderSummary(summary)}`,
    );
    return 0;
  }

  for (const w of project.warnings) ctx.io.err(`warning: ${w.file}${w.line ? `:${w.line}` : ""}: ${w.message}`);
  if (!flags.platformUrl && project.env.AGENTCLI_PLATFORM_URL) {
    checkPlatformUrl(project.env.AGENTCLI_PLATFORM_URL, "AGENTCLI_PLATFORM_URL");
  }
  if (missingTarget.length) {
    throw userError("CREDENTIALS_MISSING", {
      message: `Cannot deploy: ${missingTarget.join(", ")} ${missingTarget.length > 1 ? "are" : "is"} not set`,
      hint: `Add ${missingTarget.map((v) => `${v}=...`).join(", ")} to .env beside agent.toml or the environment${
        target.deploy.envReason ? ` (${target.deploy.envReason})` : ""
      }.`,
    });
  }
  const authProvider = project.config.auth?.provider ?? null;
  const publicAuth = authProvider !== null && driver.spec("identity", authProvider)?.public === true;
  if (publicAuth && !flags.yes) {
    if (!ctx.io.interactive) {
      const perUser = driver.specs("identity").filter((s) => s.perUser).map((s) => s.provider);
      throw userError("CONFIRMATION_REQUIRED", {
        message:
          `Cannot deploy: [auth] provider = "${authProvider}" makes the deployment public, and there is no terminal to confirm it`,
        hint: `Pass --yes to confirm a public deployment non-interactively${
          perUser.length ? `, or configure ${perUser.join(" / ")}` : ""
        }.`,
      });
    }
    const ok = await ctx.io.confirm(
      `[auth] provider = "${authProvider}": anyone with the URL will be able to call this agent. Push it?`,
    );
    if (!ok) {
      ctx.io.err("Not deployed.");
      return 1;
    }
  }
  const { isCompiled } = await import("../kernel/index.ts");
  const result = await driver.runProvider("deploy:target", "deploy", targetName, {
    target: targetName,
    bundle: bytes,
    name: project.config.agent.name,
    secrets: plan.secrets,
    // .env under the environment (and --platform-url): a PLATFORM_API_KEY in .env counts, as the check above and its hint say.
    env: project.env,
    projectDir: project.root,
    executable: isCompiled() ? process.execPath : null,
    version: ctx.version,
    log: { info: (m) => ctx.io.err(m), warn: (m) => ctx.io.err(`warning: ${m}`) },
    signal: ctx.shutdownSignal,
  });
  if (!result) {
    throw userError("DEPLOY_FAILED", {
      message: `Cannot deploy: the plugin "${target.name}" did not handle the deploy target "${targetName}"`,
      hint: `Its "deploy:target" hook answered null; report it to the plugin's author.`,
    });
  }
  ctx.io.out(
    `Deployed "${project.config.agent.name}" to ${targetName}: revision ${result.revisionId} is ${result.status}.`,
  );
  if (result.url) ctx.io.out(`URL: ${result.url}`);
  for (const line of result.nextSteps ?? []) ctx.io.out(line);
  if (result.url) {
    const { postDeploySetup } = await import("../auth/index.ts");
    for (const line of postDeploySetup(project.config, result.url, driver)) ctx.io.out(line);
  }
  return 0;
}

/** A control plane address must be an http(s) URL; anything else is the user's typo, not an unreachable server. */
function checkPlatformUrl(value: string, from: string): void {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch { /* not a URL */ }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    // --platform-url is the command line (exit 2); AGENTCLI_PLATFORM_URL is the environment (exit 1).
    throw userError(from === "--platform-url" ? "ARGS_INVALID" : "ENV_INVALID", {
      message: `Cannot deploy: ${from} "${value}" is not an http(s) URL`,
      hint: `Give the control plane's address, e.g. ${
        from === "--platform-url" ? "--platform-url " : "AGENTCLI_PLATFORM_URL="
      }${DEFAULT_PLATFORM_URL}.`,
    });
  }
}

function writeAtomic(path: string, bytes: Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, path);
}
