/**
 * One line of the settings catalogue (../settings-catalogue.ts) and the groups of
 * `docs/configuration.md`; each group's lines live in a file of this folder.
 */

/** One environment variable: where it matters, its default (as text) and what it does. */
export interface Setting {
  name: string;
  group: SettingGroup;
  default: string;
  meaning: string;
}

/** The groups of `docs/configuration.md`, in order, with their headings. */
export const SETTING_GROUPS = {
  project: "The project's `.env` (spec 2.1)",
  cli: "Command line",
  server: "Agent server (`dev`, `serve`)",
  storage: "Storage, queue and replicas",
  limits: "Limits of the Agent API",
  webhooks: "Webhooks",
  tracing: "Tracing",
  sandbox: "Sandboxes",
  platform: "Control plane (`platform serve`)",
  internal: "Set by agentcli for its own processes (not to be set by hand)",
} as const;

/** A group key of `SETTING_GROUPS`. */
export type SettingGroup = keyof typeof SETTING_GROUPS;

/** The line maker of one group: `setting(name, default, meaning)`. */
export function inGroup(group: SettingGroup): (name: string, dflt: string, meaning: string) => Setting {
  return (name, dflt, meaning) => ({ name, group, default: dflt, meaning });
}
