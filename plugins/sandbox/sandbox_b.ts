/** Sandbox provider `sandbox_b`: Hosted sandboxes of vendor B (token id and secret). */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "sandbox-sandbox_b",
  kind: "sandbox",
  description: "Hosted sandboxes of vendor B (token id and secret).",
  sandbox: {
    provider: "sandbox_b",
    env: ["SANDBOX_B_TOKEN_ID", "SANDBOX_B_TOKEN_SECRET"],
    partnerPackage: "@agentcli/sandbox-b",
    defaultTemplate: "agentcli-default",
    capabilities: { persistentFiles: true, network: true, gpu: true },
  },
});
