/** Sandbox provider `none`: No sandbox: the agent has no execute tool. */
import { definePlugin } from "../../core/index.ts";

export default definePlugin({
  name: "sandbox-none",
  kind: "sandbox",
  description: "No sandbox: the agent has no execute tool.",
  sandbox: {
    provider: "none",
    env: [],
    partnerPackage: null,
    defaultTemplate: "agentcli-default",
    capabilities: { persistentFiles: false, network: false, gpu: false },
  },
});
