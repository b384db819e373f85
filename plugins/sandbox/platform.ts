/** Sandbox provider `platform`: Sandboxes run by the platform itself (private beta). */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "sandbox-platform",
  kind: "sandbox",
  description: "Sandboxes run by the platform itself (private beta).",
  sandbox: {
    provider: "platform",
    env: ["PLATFORM_API_KEY"],
    partnerPackage: "@agentcli/sandbox-platform",
    defaultTemplate: "agentcli-default",
    capabilities: { persistentFiles: true, network: true, gpu: false },
    beta: true,
  },
});
