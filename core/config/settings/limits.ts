/** The settings of docs/configuration.md's section Limits of the Agent API. */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("limits");

export const LIMITS_SETTINGS: readonly Setting[] = [
  setting("AGENTCLI_MAX_BODY_MB", "25", "A request body (413 past it)."),
  setting(
    "AGENTCLI_MAX_MESSAGE_KB",
    "1024",
    "One message of a run's input, `command.update` or a state update (JSON size).",
  ),
  setting("AGENTCLI_MAX_MESSAGES", "1000", "Messages in one input or state update."),
  setting(
    "AGENTCLI_MAX_HISTORY_MB",
    "64",
    "A `/threads/{id}/history` answer: past it fewer states come back, with `X-Pagination-Next`.",
  ),
  setting("AGENTCLI_MAX_QUEUED_RUNS_PER_USER", "100", "Runs one user may have waiting (more: 429)."),
  setting(
    "AGENTCLI_MAX_RUNNING_RUNS_PER_USER",
    "0 (no limit but the workers)",
    "Runs of one user executing at once (more wait in the queue).",
  ),
  setting(
    "AGENTCLI_USAGE",
    "on",
    "Records every model call's tokens and estimated cost (`GET /usage`, a run's and a thread's `usage`); off: nothing recorded, no budgets.",
  ),
  setting(
    "AGENTCLI_USER_TOKENS_PER_DAY",
    "0 (no limit); `anonymous` deployments 200000",
    "Tokens one user (an anonymous visitor: per browser cookie) may spend per UTC day; over it a new run is a 429 and a run in flight stops.",
  ),
  setting(
    "AGENTCLI_USER_COST_PER_DAY",
    "0 (no limit)",
    "Estimated USD one user may spend per UTC day (the models' prices).",
  ),
  setting(
    "AGENTCLI_USER_RUNS_PER_MINUTE",
    "0 (no limit); `anonymous` deployments 10",
    "Runs one user may start per minute (more: 429).",
  ),
  setting(
    "AGENTCLI_CLIENT_TOKENS_PER_DAY",
    "0 (no limit); `anonymous` deployments 1000000",
    "Tokens anonymous callers from one client address (IPv6: one /64) may spend per UTC day.",
  ),
  setting(
    "AGENTCLI_CLIENT_RUNS_PER_MINUTE",
    "0 (no limit); `anonymous` deployments 30",
    "Runs anonymous callers from one client address may start per minute.",
  ),
  setting(
    "AGENTCLI_DEPLOYMENT_TOKENS_PER_DAY",
    "0 (no limit); `anonymous` deployments 5000000",
    "Tokens the whole deployment may spend per UTC day (every caller, the owner's platform API key too).",
  ),
  setting(
    "AGENTCLI_DEPLOYMENT_COST_PER_DAY",
    "0 (no limit)",
    "Estimated USD the whole deployment may spend per UTC day.",
  ),
  setting(
    "AGENTCLI_CLIENT_ADDRESS_HEADER",
    "(none: the connection's address)",
    "Behind a proxy: the header naming the client's address for the per-address limits (`x-forwarded-for`: its last entry). Set it only when a proxy you run sets it.",
  ),
  setting("AGENTCLI_DEPLOYMENT_RUNS_PER_MINUTE", "0 (no limit)", "Runs the whole deployment may start per minute."),
  setting(
    "AGENTCLI_MODEL_PRICES",
    "(the model plugins' tables)",
    'Model prices in USD per million tokens, JSON: `{"openai:gpt-5": {"input": 1.25, "output": 10, "cached_input": 0.125}}`; over the plugins\' tables.',
  ),
  setting(
    "AGENTCLI_MODEL_PRICES_FILE",
    "(none)",
    "A JSON file of model prices, as `AGENTCLI_MODEL_PRICES` (which wins).",
  ),
  setting(
    "AGENTCLI_BUNDLE_MAX_MB",
    "100",
    "The project's files packed into a bundle, in MiB; the file that crosses it is named.",
  ),
];
