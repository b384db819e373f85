/**
 * The sandbox conformance kit (`sandboxProviderConformance` of agentcli/testing) against the local
 * bubblewrap runtime: `--sandbox local` running the sandboxes of a `sandbox_a` agent.
 */
import { sandboxProviderConformance } from "../../bin/testing.ts";

sandboxProviderConformance({ name: "local runtime (bubblewrap)", provider: "sandbox_a", runtime: "local" });
