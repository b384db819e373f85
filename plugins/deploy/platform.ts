/**
 * The `platform` deploy target: ships a bundle to an agentcli control plane
 * (`agentcli platform serve`). Implementation lands in the next commit.
 */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "platform",
  kind: "deploy",
  description: "Deploy to an agentcli control plane (self-hosted or cloud)",
  deploy: { target: "platform", env: ["PLATFORM_API_KEY"] },
  hooks: {},
});
