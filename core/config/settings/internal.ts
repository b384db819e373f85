/** The settings of docs/configuration.md's section Set by agentcli for its own processes (not to be set by hand). */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("internal");

export const INTERNAL_SETTINGS: readonly Setting[] = [
  setting(
    "AGENTCLI_PLATFORM_SANDBOX_KEY",
    "set per revision",
    "The key a deployment's `platform` sandboxes are created with (deleted with it).",
  ),
  setting(
    "AGENTCLI_DEPLOYMENT_ID",
    "`local`",
    "The deployment a revision belongs to; sandboxes are labelled `agentcli.deployment` with it.",
  ),
  setting(
    "AGENTCLI_GATE_TOKEN",
    "set per gated revision",
    "The credential the release gates call a revision with under an identity provider (`x-agentcli-gate`; docs/control-plane.md).",
  ),
  setting(
    "AGENTCLI_REVISION_ID",
    "set per revision",
    "The revision a revision's process or Kubernetes pod runs. Under `serve` on PostgreSQL, runs record it and a run executes on a worker of its revision while that revision has a live one (then on any).",
  ),
  setting("AGENTCLI_BUNDLE_URL", "set per revision", "Where a Kubernetes pod's init container downloads its bundle."),
  setting("AGENTCLI_BUNDLE_PATH", "set per revision", "Where that bundle is written in the pod."),
  setting("AGENTCLI_BUNDLE_TOKEN", "set per revision", "The bearer token of that download (from a Kubernetes Secret)."),
  setting(
    "AGENTCLI_COMMAND_ID",
    "set per command",
    "Marks a Kubernetes sandbox command's processes so a timeout can kill them all.",
  ),
  setting(
    "AGENTCLI_MEMORY_TUNED",
    "set on restart",
    "The variables `bin/agentcli.js` set when it restarted `dev`/`serve` in place with memory settings.",
  ),
  setting("AGENTCLI_MEMORY_TUNED_EXE", "set on restart", "The same for the single executable's restart in place."),
  setting(
    "AGENTCLI_CONFORMANCE_CANARY",
    "set by the sandbox conformance suite",
    "A value a sandbox provider must not leak into commands' environment.",
  ),
];
