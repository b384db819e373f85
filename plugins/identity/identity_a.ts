/** `identity_a`: per-user auth with a GoTrue-style identity server (session access tokens). */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "identity_a",
  kind: "identity",
  description: "Per-user authentication: session access tokens verified by the identity server at IDENTITY_A_URL.",
  identity: {
    provider: "identity_a",
    env: ["IDENTITY_A_URL", "IDENTITY_A_PUBLISHABLE_DEFAULT_KEY"],
    frontendEnv: [],
    signIn: "email-password",
    perUser: true,
    posture: "per-user authentication with identity_a: requests carry 'Authorization: Bearer <session access token>'; threads, runs, store and memory are private to each user",
  },
});
