/**
 * What a person must do in the identity provider's dashboard after a deploy (spec 5.1,
 * "Post-deploy setup"), once per deployment URL: each identity plugin says it in its
 * `identity.postDeploy`.
 *
 * @example
 * for (const line of postDeploySetup(config, "https://my-agent.example.com", driver)) io.out(line);
 */
import type { AgentConfig } from "../config/index.ts";
import type { PluginDriver } from "../kernel/index.ts";

/** The setup lines of the configured provider; empty when there is nothing to do. */
export function postDeploySetup(config: AgentConfig, deploymentUrl: string, driver: PluginDriver): string[] {
  const provider = config.auth?.provider ?? null;
  if (provider === null) return [];
  const spec = driver.spec("identity", provider);
  if (!spec?.postDeploy) return [];
  const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(deploymentUrl) ? deploymentUrl : `https://${deploymentUrl}`);
  return spec.postDeploy({ url });
}
