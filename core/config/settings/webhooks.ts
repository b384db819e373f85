/** The settings of docs/configuration.md's section Webhooks. */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("webhooks");

export const WEBHOOKS_SETTINGS: readonly Setting[] = [
  setting(
    "AGENTCLI_WEBHOOK_SECRET",
    "unset",
    "When set, webhooks carry `X-Agentcli-Signature: sha256=<hex>` (HMAC of the body).",
  ),
  setting(
    "AGENTCLI_WEBHOOK_ALLOW_PRIVATE",
    "false under `serve` (`dev`: always allowed)",
    "`true` lets webhooks reach private and loopback addresses.",
  ),
  setting("AGENTCLI_WEBHOOK_TIMEOUT_SECONDS", "10", "One attempt's limit (1 to 600)."),
  setting("AGENTCLI_WEBHOOK_MAX_ATTEMPTS", "5", "Attempts in all (1 to 20)."),
];
