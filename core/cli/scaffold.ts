/** The files `agentcli init` writes (spec 2.1): exactly these, nothing else. */

/**
 * Where `init` writes agent.toml's JSON Schema for editors (in agentcli's own folder, beside
 * the project's files): the `#:schema` line points here, so it resolves offline.
 */
export const SCHEMA_PATH = ".agentcli/agent.schema.json";

export function scaffoldFiles(name: string, version: string): Array<{ path: string; content: string }> {
  return [
    {
      path: "agent.toml",
      content: `#:schema ./${SCHEMA_PATH}
# Agent project configuration. Sections: [agent] (required), [sandbox], [auth], [frontend].
# The schema above (agentcli ${version}) lets editors complete and check this file; refresh it
# after an upgrade with: agentcli schema > ${SCHEMA_PATH}
# Reference of every key: docs/project.md of agentcli.

[agent]
name = "${name}"
description = "A deep agent that plans, uses tools and skills, and remembers."
# model = "openai:gpt-5"   # "provider:model"; omitted = chosen from the credentials in .env

# [sandbox]
# provider = "none"        # none | sandbox_a | sandbox_b | sandbox_c | platform
# scope = "thread"         # thread | assistant

# [auth]
# provider = "anonymous"   # identity_a | identity_b | anonymous

# [frontend]
# enabled = true           # the chat UI at /app (needs [auth])
`,
    },
    {
      path: "AGENTS.md",
      content: `# ${name}

You are a helpful, careful assistant.

- For tasks with several steps, write a plan with \`write_todos\` and keep it up to date.
- Keep notes and drafts in files; read them back before you answer.
- Before delivering written work, use the \`review\` skill.
`,
    },
    {
      path: ".env",
      content: `# Secrets for this agent. Loaded by agentcli dev and deploy; values are never printed.
# Keep this file out of version control.

# Model provider keys: set the one(s) you use.
OPENAI_API_KEY=
ANTHROPIC_API_KEY=
# GOOGLE_API_KEY=
# NVIDIA_API_KEY=

# Needed by "agentcli deploy" (and the "platform" sandbox).
# PLATFORM_API_KEY=

# [auth] provider = "identity_a"
# IDENTITY_A_URL=
# IDENTITY_A_PUBLISHABLE_DEFAULT_KEY=
# [auth] provider = "identity_b"
# IDENTITY_B_SECRET_KEY=
# IDENTITY_B_PUBLISHABLE_KEY=
`,
    },
    { path: "mcp.json", content: `{\n  "mcpServers": {}\n}\n` },
    {
      path: "evals/plans-first.yaml",
      content: `# An eval case: "agentcli eval" plays the turns against the agent and runs the checks
# (format: docs/evals.md of agentcli; its JSON Schema: agentcli schema --eval).
turns:
  - user: Plan a three-step study of how tides work, then give me the plan in one short paragraph.
checks:
  - status: success
  - tool_called: { name: write_todos }
  - text_matches: /tide/i
  - rubric: The answer is a short plan with three steps about tides.
`,
    },
    {
      path: "skills/review/SKILL.md",
      content: `---
name: review
description: Review a draft for correctness, clarity and completeness before delivering it.
---

# Review

1. Read the whole draft before commenting.
2. Check each claim: is it correct, and is its source given?
3. Check the structure: the answer first, then the details.
4. List concrete fixes, most important first, then apply them.
`,
    },
  ];
}
