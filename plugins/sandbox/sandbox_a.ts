/** Sandbox provider `sandbox_a`: Hosted sandboxes of vendor A. */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "sandbox-sandbox_a",
  kind: "sandbox",
  description: "Hosted sandboxes of vendor A.",
  sandbox: {
    provider: "sandbox_a",
    env: ["SANDBOX_A_API_KEY"],
    partnerPackage: "@agentcli/sandbox-a",
    defaultTemplate: "agentcli-default",
    capabilities: { persistentFiles: true, network: true, gpu: false },
  },
});
