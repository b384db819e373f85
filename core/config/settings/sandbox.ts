/** The settings of docs/configuration.md's section Sandboxes. */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("sandbox");

export const SANDBOX_SETTINGS: readonly Setting[] = [
  setting("AGENTCLI_SANDBOX_DIR", "`<data-dir>-sandboxes/`", "Where `--sandbox local` keeps its sandboxes."),
  setting("AGENTCLI_SANDBOX_IDLE_SECONDS", "1800", "A sandbox unused this long is stopped (0: never)."),
  setting(
    "AGENTCLI_SANDBOX_ALLOW_NETWORK",
    "unset",
    "`1`: local sandbox commands share the host's network; otherwise they have none (loopback only).",
  ),
  setting(
    "AGENTCLI_SANDBOX_MEMORY_MB",
    "2048",
    "Memory of a local sandbox's processes together (its cgroup); per process (`RLIMIT_AS`) without a cgroup. See docs/security.md, Sandbox limits.",
  ),
  setting(
    "AGENTCLI_SANDBOX_MAX_PROCESSES",
    "256",
    "Processes and threads of a local sandbox together (its cgroup); `RLIMIT_NPROC` without a cgroup.",
  ),
  setting(
    "AGENTCLI_SANDBOX_CPUS",
    "1",
    "CPUs a local sandbox may use together (its cgroup; fractions allowed); not bounded without a cgroup.",
  ),
  setting("AGENTCLI_SANDBOX_TMP_MB", "256", "Size of a local sandbox's `/tmp` and of its `/dev/shm` (tmpfs each)."),
  setting(
    "AGENTCLI_SANDBOX_WORKSPACE_MB",
    "2048",
    "Disk quota of a local sandbox's `/workspace`, and its largest file.",
  ),
  setting(
    "AGENTCLI_SANDBOX_CGROUP",
    "unset",
    "A delegated cgroup v2 group under which local sandboxes get their cgroups (default: the server's own group).",
  ),
  setting("AGENTCLI_SANDBOX_OUTPUT_KB", "100", "Output returned per sandbox command; the rest is cut and marked."),
];
