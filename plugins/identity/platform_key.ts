/**
 * `platform_key`: the platform default when `agent.toml` has no `[auth]` section (spec 5.1).
 * Every request must carry `x-api-key` equal to `PLATFORM_API_KEY`, compared in constant time.
 * Callers are one service principal (the deployment's owner), not distinct users: they share
 * the identity `platform-api-key`.
 */
import { constantTimeEqual, definePlugin, identityUnavailable, unauthorized } from "../../core/index.ts";

/** The identity of every caller holding the platform API key. */
export const PLATFORM_SERVICE_IDENTITY = "platform-api-key";

export default definePlugin({
  name: "platform_key",
  kind: "identity",
  description: "Platform default without [auth]: requests carry the platform API key in x-api-key.",
  identity: {
    provider: "platform_key",
    env: ["PLATFORM_API_KEY"],
    frontendEnv: [],
    signIn: "none",
    perUser: false,
    posture:
      "platform API key: every request carries 'x-api-key: <PLATFORM_API_KEY>'; all callers act as one service identity",
  },
  hooks: {
    "auth:authenticate": async ({ request, env }) => {
      const expected = env.PLATFORM_API_KEY?.trim();
      if (!expected) {
        throw identityUnavailable(
          "Cannot authenticate request: PLATFORM_API_KEY is not set on the server",
          "Set PLATFORM_API_KEY in the deployment's secrets, or add an [auth] section to agent.toml.",
        );
      }
      const given = request.headers.get("x-api-key");
      if (given === null || given.trim() === "") {
        throw unauthorized("Cannot authenticate request: no 'x-api-key' header", {
          hint: "Send the platform API key in the 'x-api-key' header.",
        });
      }
      if (!(await constantTimeEqual(given.trim(), expected))) {
        throw unauthorized("Cannot authenticate request: the 'x-api-key' header is not the platform API key", {
          hint: "Send the platform API key (PLATFORM_API_KEY) in the 'x-api-key' header.",
        });
      }
      return { identity: PLATFORM_SERVICE_IDENTITY, isAuthenticated: true, displayName: "Platform API key" };
    },
  },
});
