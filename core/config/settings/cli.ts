/** The settings of docs/configuration.md's section Command line. */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("cli");

export const CLI_SETTINGS: readonly Setting[] = [
  setting("AGENTCLI_PLUGINS", "unset", "`:`-separated paths of third-party plugin files to load, as `--plugin` does."),
  setting(
    "AGENTCLI_STOP_GRACE_SECONDS",
    "30",
    "After SIGTERM/SIGINT, seconds a command may still run before the process ends (143, or 130 for SIGINT).",
  ),
  setting(
    "AGENTCLI_PLATFORM_URL",
    "`http://127.0.0.1:8100`",
    "The control plane `deploy --target platform` and the `platform` sandbox talk to (`--platform-url` overrides).",
  ),
  setting(
    "AGENTCLI_EXECUTABLE",
    "the running executable",
    "The Linux x64 single executable `deploy --target docker` puts in the image, when running from sources.",
  ),
  setting(
    "AGENTCLI_TEMPLATE_CACHE",
    "1",
    "`0` turns off the cache of embedded-database templates in `~/.cache/agentcli/` (or `$XDG_CACHE_HOME/agentcli/`).",
  ),
  setting(
    "AGENTCLI_DEBUG_CODE_CACHE",
    "unset",
    "`1`: the single executable prints `app.cjs code cache used` when its V8 code cache is accepted.",
  ),
];
