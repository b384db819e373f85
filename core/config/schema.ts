/**
 * The schema of `agent.toml` (spec 2.1-2.5, 2.7): one zod schema that validates the file,
 * applies every default of the spec, and generates the shipped JSON Schema.
 * Provider names are checked against the registered plugins, not hard-coded here, so a
 * third-party sandbox or identity plugin extends what `agent.toml` accepts.
 */
import { z } from "zod";

/** Default `[sandbox].template` when the provider has none of its own. */
export const DEFAULT_SANDBOX_TEMPLATE = "agentcli-default";
export const DEFAULT_FRONTEND_SUBTITLE = "An AI agent that plans, researches and gets things done.";
export const DEFAULT_FRONTEND_PROMPTS = [
  "Research the latest developments in a topic and summarize them",
  "Compare two approaches and list their trade-offs",
  "Plan a literature review with sources to read first",
  "Explain a concept step by step with examples",
];

/** `provider:model`: a lower-case provider prefix, a colon, a model id without spaces. */
export const MODEL_RE = /^[a-z][a-z0-9_-]*:\S+$/;
const NAME_RE = /^[A-Za-z0-9](?:[A-Za-z0-9 _.-]*[A-Za-z0-9])?$/;

export const agentSection = z.strictObject({
  name: z.string({ error: "is required: the agent's name" }).min(1, "must not be empty").max(100).regex(
    NAME_RE,
    "may contain letters, digits, spaces, '_', '.', '-' and must start and end with a letter or digit",
  )
    .describe("Name of the deployed agent; used as the assistant identifier on the platform."),
  description: z.string().optional().describe("Human-readable description."),
  model: z.string().regex(MODEL_RE, 'must be "provider:model", e.g. "openai:gpt-5"').optional()
    .describe("Format provider:model. When omitted, a default is chosen by available credentials."),
});

export const sandboxSection = z.strictObject({
  provider: z.string().default("none").describe(
    'Sandbox provider: "none", "sandbox_a", "sandbox_b", "sandbox_c", "platform" (private beta), or a plugin\'s.',
  ),
  template: z.string().min(1, "must not be empty (omit it for the provider's default)").optional().describe(
    "Provider-specific template name.",
  ),
  image: z.string().min(1, 'must not be empty (omit it for "python:3")').default("python:3").describe(
    "Base container image of the sandbox.",
  ),
  scope: z.enum(["thread", "assistant"], { error: 'must be "thread" or "assistant"' }).default("thread")
    .describe("thread: one sandbox per conversation; assistant: one sandbox shared by all conversations."),
});

export const authSection = z.strictObject({
  provider: z.string({ error: 'is required in [auth]: one of "identity_a", "identity_b", "anonymous"' }).min(
    1,
    'must not be empty: one of "identity_a", "identity_b", "anonymous"',
  )
    .describe('Identity provider: "identity_a", "identity_b", "anonymous", or a plugin\'s.'),
});

export const frontendSection = z.strictObject({
  enabled: z.boolean().default(false).describe("Bundle the prebuilt chat UI at /app."),
  app_name: z.string().min(1, "must not be empty (omit it to use [agent].name)").optional().describe(
    "Display name in header and browser tab (default: [agent].name).",
  ),
  subtitle: z.string().optional().describe("Shown under the app name and on the empty state."),
  prompts: z.array(z.string().min(1, "must not be empty")).optional().describe(
    "Suggestion chips shown when there are no messages.",
  ),
});

/** `agent.toml` of the main agent. */
export const agentTomlSchema = z.strictObject({
  agent: agentSection,
  sandbox: sandboxSection.optional(),
  auth: authSection.optional(),
  frontend: frontendSection.optional(),
});

/** `agent.toml` of a subagent: `[agent]` with a required, non-empty description. */
export const subagentTomlSchema = z.strictObject({
  agent: z.strictObject({
    name: agentSection.shape.name,
    description: z.string({ error: "is required: the main agent reads it to decide when to delegate" }).trim().min(
      1,
      "must not be empty: the main agent reads it to decide when to delegate",
    ),
    model: agentSection.shape.model,
  }),
});

export const ALLOWED_SECTIONS = ["agent", "sandbox", "auth", "frontend"] as const;

export type AgentToml = z.output<typeof agentTomlSchema>;

/** The normalized configuration and its parts: plugin-facing, so they live in the kernel (hooks name them). */
export type { AgentConfig, McpServerConfig, SkillInfo, SubagentConfig } from "../kernel/index.ts";
