/** The settings of docs/configuration.md's section The project's `.env` (spec 2.1). */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("project");

export const PROJECT_SETTINGS: readonly Setting[] = [
  setting(
    "<PROVIDER>_API_KEY",
    "unset",
    "For each model provider used (main agent and subagents), e.g. `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GOOGLE_API_KEY`, `NVIDIA_API_KEY`.",
  ),
  setting(
    "PLATFORM_API_KEY",
    "unset",
    "For `deploy`, for the `platform` sandbox, and for callers of a deployment without `[auth]` (`x-api-key`).",
  ),
  setting("SANDBOX_A_API_KEY", "unset", 'For `[sandbox] provider = "sandbox_a"`.'),
  setting("SANDBOX_B_TOKEN_ID", "unset", 'With `SANDBOX_B_TOKEN_SECRET`, for `[sandbox] provider = "sandbox_b"`.'),
  setting("SANDBOX_B_TOKEN_SECRET", "unset", 'With `SANDBOX_B_TOKEN_ID`, for `[sandbox] provider = "sandbox_b"`.'),
  setting("SANDBOX_C_API_KEY", "unset", 'For `[sandbox] provider = "sandbox_c"`.'),
  setting(
    "IDENTITY_A_URL",
    "unset",
    'With `IDENTITY_A_PUBLISHABLE_DEFAULT_KEY`, for `[auth] provider = "identity_a"`.',
  ),
  setting(
    "IDENTITY_A_PUBLISHABLE_DEFAULT_KEY",
    "unset",
    'With `IDENTITY_A_URL`, for `[auth] provider = "identity_a"`.',
  ),
  setting("IDENTITY_B_SECRET_KEY", "unset", 'For `[auth] provider = "identity_b"`.'),
  setting(
    "IDENTITY_B_PUBLISHABLE_KEY",
    "unset",
    "For `identity_b` with `[frontend].enabled = true` (browser-facing, distinct from the secret key).",
  ),
  setting(
    "IDENTITY_B_JWKS_URL",
    "`{IDENTITY_B_API_URL}/v1/jwks`",
    "Where `identity_b` tokens' signing keys are fetched.",
  ),
  setting(
    "IDENTITY_B_AUTHORIZED_PARTIES",
    "unset",
    "Comma-separated origins; when set, an `identity_b` token's `azp` must be one of them.",
  ),
  setting(
    "<PROVIDER>_BASE_URL",
    "the provider's",
    "Another address for an OpenAI-wire or Anthropic provider, e.g. `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `OLLAMA_BASE_URL` (see docs/project.md, Models).",
  ),
  setting("IDENTITY_B_API_URL", "the provider's", "`identity_b`'s API, for its JWKS."),
  setting(
    "IDENTITY_B_JS_URL",
    "from the publishable key",
    "Where the chat UI loads `identity_b`'s sign-in widget script.",
  ),
];
