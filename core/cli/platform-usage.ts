/**
 * `agentcli platform usage <name>`: a deployment's usage as the control plane reads it from
 * the deployment (`GET /v2/deployments/{id}/usage`, core/platform/routes/usage.ts), grouped
 * by day, user, assistant or model; a table, or `--json` as the API answers it.
 */
import { agentcliError, DeploymentNotDeployed, PlatformUsageKeyMissing } from "../kernel/index.ts";
import type { CliContext } from "./context.ts";
import { type CommandSpec, type FlagSpec, parseArgs, renderHelp } from "./args.ts";
import { checkPlatformUrl, DEFAULT_PLATFORM_URL } from "./deploy.ts";

const FLAGS = {
  groupBy: {
    type: "string",
    placeholder: "day|user|assistant|model",
    description: "What the rows are",
    default: "day",
  },
  since: { type: "string", placeholder: "<time>", description: "From this ISO 8601 time" },
  until: { type: "string", placeholder: "<time>", description: "Before this ISO 8601 time" },
  user: { type: "string", placeholder: "<key>", description: "One user's usage (user:<id>, browser:<hash>, ...)" },
  platformUrl: {
    type: "string",
    placeholder: "<url>",
    description: `Control plane address (default: $AGENTCLI_PLATFORM_URL, or ${DEFAULT_PLATFORM_URL} when it is unset)`,
  },
  json: { type: "boolean", description: "Print the answer as JSON" },
} satisfies Record<string, FlagSpec>;

export const USAGE_COMMAND = {
  name: "platform usage",
  usage:
    "agentcli platform usage <name> [--group-by day|user|assistant|model] [--since <time>] [--until <time>] [--user <key>] [--platform-url <url>] [--json]",
  summary:
    "Print a deployment's usage (model calls, tokens, estimated cost) as it records it, read through the control plane with $PLATFORM_API_KEY.",
  flags: FLAGS,
  positionals: [{ name: "name", description: "The deployment's name", required: true }],
} satisfies CommandSpec<typeof FLAGS>;

interface Row {
  key: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number | null;
}

interface UsageAnswer {
  group_by: string;
  recording: boolean;
  totals: Omit<Row, "key">;
  rows: Row[];
}

export async function usage(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, positionals, help } = parseArgs(USAGE_COMMAND, argv);
  if (help) return ctx.io.out(renderHelp(USAGE_COMMAND)), 0;
  const name = positionals[0]!;
  if (flags.platformUrl !== undefined) checkPlatformUrl(flags.platformUrl, "--platform-url");
  else if (ctx.env.AGENTCLI_PLATFORM_URL) checkPlatformUrl(ctx.env.AGENTCLI_PLATFORM_URL, "AGENTCLI_PLATFORM_URL");
  if (!ctx.env.PLATFORM_API_KEY) throw agentcliError(PlatformUsageKeyMissing);
  // Loaded when asked, as the release actions do: the rest of the control plane stays unloaded.
  const { platformClient } = await import("../platform/client.ts");
  const api = platformClient({ env: ctx.env, base: flags.platformUrl });
  const base = api.base;
  const page = await api.call<{ resources: Array<{ id: string; name: string }> }>(
    "GET",
    `/v2/deployments?name_contains=${encodeURIComponent(name)}&limit=100`,
  );
  const d = page.resources.find((x) => x.name === name);
  if (!d) throw agentcliError(DeploymentNotDeployed, { name, base, action: "read its usage" });
  const query = new URLSearchParams({ group_by: flags.groupBy });
  for (const k of ["since", "until", "user"] as const) if (flags[k]) query.set(k, flags[k]);
  const answer = await api.call<UsageAnswer>("GET", `/v2/deployments/${d.id}/usage?${query}`);
  if (flags.json) return ctx.io.out(JSON.stringify(answer, null, 2)), 0;
  ctx.io.out(usageTable(answer));
  if (!answer.recording) ctx.io.out(`"${name}" records no usage (AGENTCLI_USAGE=off).`);
  return 0;
}

/** The rows and their totals as aligned columns. */
export function usageTable(a: UsageAnswer): string {
  const cost = (v: number | null) => (v === null ? "-" : `$${v.toFixed(4)}`);
  const line = (key: string, r: Omit<Row, "key">) => [
    key,
    String(r.calls),
    String(r.input_tokens),
    String(r.output_tokens),
    String(r.total_tokens),
    cost(r.cost_usd),
  ];
  const cells = [
    [a.group_by, "calls", "input", "output", "total", "cost"],
    ...a.rows.map((r) => line(r.key, r)),
    line("total", a.totals),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map((c) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join("  "))
    .join("\n");
}
