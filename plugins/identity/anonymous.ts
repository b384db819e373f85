/**
 * `anonymous`: a permissive handler; anyone with the URL may call the API. Every request
 * passes as the same `anonymous` caller with `isAuthenticated: false`, so per-user memory is
 * skipped; the UI's per-browser cookie scopes its thread picker for convenience, not security.
 */
import { definePlugin } from "../../core/index.ts";

export default definePlugin({
  name: "anonymous",
  kind: "identity",
  description: "No authentication: anyone with the deployment URL can call the API.",
  identity: {
    provider: "anonymous",
    env: [],
    frontendEnv: [],
    signIn: "none",
    perUser: false,
    public: true,
    posture:
      "PUBLIC (anonymous): anyone with the deployment URL can call the API, no header required; the UI scopes its thread picker by a per-browser cookie, which is UX only, not security; per-user memory is skipped",
  },
  hooks: {
    "auth:authenticate": () => ({ identity: "anonymous", isAuthenticated: false, displayName: "Anonymous" }),
  },
});
