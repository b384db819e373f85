/** The settings of docs/configuration.md's section Control plane (`platform serve`). */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("platform");

export const PLATFORM_SETTINGS: readonly Setting[] = [
  setting(
    "AGENTCLI_PLATFORM_SECRETS_KEY",
    "generated into `<data-dir>/secrets.key`",
    "The key (16, 24 or 32 bytes) deployment and revision secrets are encrypted with; replicas share it.",
  ),
  setting(
    "AGENTCLI_PLATFORM_SECRETS_PREVIOUS_KEYS",
    "unset",
    "Comma-separated former keys, still read while rotating.",
  ),
  setting("AGENTCLI_PLATFORM_MAX_BODY_MB", "1", "A JSON request body to the control plane (413 past it)."),
  setting("AGENTCLI_PLATFORM_MAX_UPLOAD_MB", "256", "An uploaded archive, compressed."),
  setting("AGENTCLI_PLATFORM_MAX_UNPACKED_MB", "512", "An uploaded archive, unpacked (counted while streaming)."),
  setting("AGENTCLI_PLATFORM_MAX_ARCHIVE_ENTRIES", "10000", "Entries of an uploaded archive."),
  setting(
    "AGENTCLI_PLATFORM_PACKAGES_KEEP_DAYS",
    "7",
    "Days an install of a LangGraph.js project's npm packages (`<data-dir>/packages/<hash>`) stays once no kept revision uses it (0: removed at the next sweep).",
  ),
  setting(
    "AGENTCLI_PLATFORM_PACKAGES_KEEP_REVISIONS",
    "5",
    "Revisions that served, per deployment, whose installed npm packages are kept for a rollback (an older one installs them again).",
  ),
];
