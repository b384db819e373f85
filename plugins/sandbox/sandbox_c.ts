/** Sandbox provider `sandbox_c`: Hosted sandboxes of vendor C. */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "sandbox-sandbox_c",
  kind: "sandbox",
  description: "Hosted sandboxes of vendor C.",
  sandbox: {
    provider: "sandbox_c",
    env: ["SANDBOX_C_API_KEY"],
    partnerPackage: "@agentcli/sandbox-c",
    defaultTemplate: "agentcli-default",
    capabilities: { persistentFiles: true, network: true, gpu: false },
  },
});
