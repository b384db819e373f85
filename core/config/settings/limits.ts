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
    "AGENTCLI_BUNDLE_MAX_MB",
    "100",
    "The project's files packed into a bundle, in MiB; the file that crosses it is named.",
  ),
];
