/**
 * The sandbox conformance suite (core/testing/sandbox-conformance.ts) against the `platform`
 * provider: an agent with `[sandbox] provider = "platform"` whose server reaches our own
 * control plane (`agentcli platform serve`, started here) at `AGENTCLI_PLATFORM_URL` with a
 * tenant's `PLATFORM_API_KEY`, as `agentcli dev` does. The control plane runs the sandboxes on
 * its local listener's bubblewrap runtime.
 */
import { after } from "node:test";
import { sandboxConformance } from "../../core/testing/sandbox-conformance.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { startTestPlatform } from "../platform/_harness.ts";

const platform = await startTestPlatform({ listen: { port: 0 }, sandboxSweepMs: 0 });
after(() => platform.close());

sandboxConformance({
  name: "platform provider (our control plane)",
  provider: "platform",
  builtins: builtinPlugins,
  env: { AGENTCLI_PLATFORM_URL: platform.platform.listening!.url, PLATFORM_API_KEY: platform.keyA },
  startModelServer,
  workdir: "/workspace",
});
