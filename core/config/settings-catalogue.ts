/**
 * Every environment variable agentcli reads or sets, one line each: name, default, meaning.
 * `docs/configuration.md` is generated from this list (`node scripts/gen-configuration.ts`),
 * and `tests/toolchain/configuration.test.ts` checks it against every `AGENTCLI_*` name in
 * `core/`, `plugins/` and `bin/`. A new variable: add one `setting(...)` line to its group's
 * file in `settings/` (one file per group of `SETTING_GROUPS`).
 */
import { PROJECT_SETTINGS } from "./settings/project.ts";
import { CLI_SETTINGS } from "./settings/cli.ts";
import { SERVER_SETTINGS } from "./settings/server.ts";
import { STORAGE_SETTINGS } from "./settings/storage.ts";
import { LIMITS_SETTINGS } from "./settings/limits.ts";
import { WEBHOOKS_SETTINGS } from "./settings/webhooks.ts";
import { TRACING_SETTINGS } from "./settings/tracing.ts";
import { SANDBOX_SETTINGS } from "./settings/sandbox.ts";
import { PLATFORM_SETTINGS } from "./settings/platform.ts";
import { INTERNAL_SETTINGS } from "./settings/internal.ts";
import type { Setting } from "./settings/setting.ts";

export { SETTING_GROUPS } from "./settings/setting.ts";
export type { Setting, SettingGroup } from "./settings/setting.ts";

/** The catalogue, grouped as `docs/configuration.md` shows it. */
export const SETTINGS: readonly Setting[] = [
  ...PROJECT_SETTINGS,
  ...CLI_SETTINGS,
  ...SERVER_SETTINGS,
  ...STORAGE_SETTINGS,
  ...LIMITS_SETTINGS,
  ...WEBHOOKS_SETTINGS,
  ...TRACING_SETTINGS,
  ...SANDBOX_SETTINGS,
  ...PLATFORM_SETTINGS,
  ...INTERNAL_SETTINGS,
];
