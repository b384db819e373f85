/**
 * The sandbox conformance kit (`sandboxProviderConformance` of agentcli/testing) against the `platform`
 * provider: an agent with `[sandbox] provider = "platform"` whose server reaches our own
 * control plane (`agentcli platform serve`, started here) at `AGENTCLI_PLATFORM_URL` with a
 * tenant's `PLATFORM_API_KEY`, as `agentcli dev` does. The control plane runs the sandboxes on
 * its local listener's bubblewrap runtime.
 */
import { after } from "node:test";
import { sandboxProviderConformance } from "../../bin/testing.ts";
import { startTestPlatform } from "../platform/_harness.ts";

const platform = await startTestPlatform({ listen: { port: 0 }, sandboxSweepMs: 0 });
after(() => platform.close());

sandboxProviderConformance({
  name: "platform provider (our control plane)",
  provider: "platform",
  env: { AGENTCLI_PLATFORM_URL: platform.platform.listening!.url, PLATFORM_API_KEY: platform.keyA },
  workdir: "/workspace",
});
