/**
 * The sandbox conformance suite (core/testing/sandbox-conformance.ts) against the local
 * bubblewrap runtime: `--sandbox local` running the sandboxes of a `sandbox_a` agent.
 */
import { sandboxConformance } from "../../core/testing/sandbox-conformance.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { builtinPlugins } from "../../plugins/registry.ts";

sandboxConformance({ name: "local runtime (bubblewrap)", provider: "sandbox_a", runtime: "local", builtins: builtinPlugins, startModelServer });
