/**
 * What a person must do in the identity provider's dashboard after a deploy (spec 5.1,
 * "Post-deploy setup"), once per deployment URL, so sign-in redirects, password-reset and
 * email-confirmation links come back to the app.
 *
 * @example
 * for (const line of postDeploySetup(config, "https://my-agent.example.com")) io.out(line);
 */
import type { AgentConfig } from "../config/schema.ts";

/** The setup lines for the configured provider; empty when there is nothing to do. */
export function postDeploySetup(config: AgentConfig, deploymentUrl: string): string[] {
  const provider = config.auth?.provider ?? null;
  const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(deploymentUrl) ? deploymentUrl : `https://${deploymentUrl}`);
  const origin = url.origin;
  if (provider === "identity_a") {
    return [
      `identity_a: add the redirect URL pattern "${origin}/app/**" to the allowed redirect URLs of your identity_a project ` +
        `(once per deployment URL), so sign-in redirects, password-reset and email-confirmation links return to the app.`,
    ];
  }
  if (provider === "identity_b") {
    return [
      `identity_b: add "${url.host}" to the allowed domains of your identity_b application (once per deployment URL), ` +
        `so sign-in redirects and links return to the app. Development instances allow localhost automatically.`,
      `identity_b: if IDENTITY_B_AUTHORIZED_PARTIES is set, add "${origin}" to it.`,
    ];
  }
  return [];
}
