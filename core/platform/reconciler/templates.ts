/**
 * Prebuilt templates of `internal_template` deployments (`source_config.template`). A template
 * is a set of project files; the control plane writes them to a work folder, names the agent
 * after the deployment, and bundles them like any other project. The CLI registers them
 * (`agentcli platform serve`): `starter` is what `agentcli init` writes, `research` is the
 * `examples/research` project (a test keeps this copy equal to the folder).
 *
 * @example
 * const files = RESEARCH_TEMPLATE.files("my-agent");
 */

export interface TemplateFile {
  path: string;
  content: string;
}

/** A template the server can build. */
export interface AgentTemplate {
  name: string;
  description: string;
  /** Secrets a deployment of it must carry (checked on create). */
  requiredSecrets: readonly string[];
  /** The project files, with the agent named `agentName`. */
  files(agentName: string): TemplateFile[];
}

/** The `[agent].name` of a deployment's agent: the deployment name within the config's limits. */
export function agentNameFor(deploymentName: string): string {
  return deploymentName.slice(0, 100).replace(/[^A-Za-z0-9._ -]+/g, "-").replace(/^[^A-Za-z0-9]+/, "").replace(
    /[^A-Za-z0-9]+$/,
    "",
  ) || "agent";
}

/** `GET /v2/templates` item (extension). */
export function templateResource(t: AgentTemplate) {
  return {
    name: t.name,
    description: t.description,
    required_secrets: [...t.requiredSecrets],
    files: t.files("agent").map((f) => f.path),
  };
}

const RESEARCH_FILES: readonly TemplateFile[] = [
  {
    path: "agent.toml",
    content:
      '#:schema ../../schema/agent.schema.json\n# The example agent that `agentcli dev` runs in the README\'s first command.\n\n[agent]\nname = "research-assistant"\ndescription = "A research assistant that plans, reads, and writes reports."\n# model = "openai:gpt-5"   # omitted: chosen from the credentials you have (see README)\n\n[auth]\nprovider = "anonymous"\n\n[frontend]\nenabled = true\napp_name = "Research Assistant"\n',
  },
  {
    path: "AGENTS.md",
    content:
      "# Research assistant\n\nYou are a careful research assistant. For any task with more than one step, write a plan\nwith `write_todos` first and keep it current. Save drafts and notes as files, cite your\nsources, and finish with a short summary of what you found and what is still open.\n",
  },
  {
    path: "approvals.toml",
    content:
      '# Tools that wait for your approval before they run (an approval card in the chat UI).\n# Names: built-in tools ("write_file", "edit_file", "execute") or MCP tools ("<server>/<tool>", "<server>/*").\ntools = ["write_file"]\n',
  },
  { path: "mcp.json", content: '{\n  "mcpServers": {}\n}\n' },
  {
    path: "skills/review/SKILL.md",
    content:
      "---\nname: review\ndescription: Review a draft report for accuracy, structure and missing sources; use before delivering a report.\n---\n\n# Review a draft\n\n1. Read the draft end to end before commenting.\n2. Check every factual claim has a source; list the ones that do not.\n3. Check the structure: a summary first, then findings, then open questions.\n4. Return a short list of concrete fixes, most important first.\n",
  },
  {
    path: "user/AGENTS.md",
    content:
      "# About this user\n\n<!-- The agent keeps what it learns about you here: preferred depth and format of reports,\n     topics you follow, sources you trust or distrust. Edit freely. -->\n",
  },
  {
    path: "subagents/critic/agent.toml",
    content:
      '[agent]\nname = "critic"\ndescription = "Critiques a draft report: checks each claim against its sources and lists weak or unsupported statements. Give it the draft text or the path of the draft."\n',
  },
  {
    path: "subagents/critic/AGENTS.md",
    content:
      "# Critic\n\nYou are a careful critic of research reports. You receive a draft (or the path of one) and\nreturn a short list of problems, most serious first: unsupported claims, claims that\ncontradict their sources, missing counter-evidence, unclear wording.\n\n- Use the `fact-check` skill for every factual claim.\n- Keep notes on recurring problems in `/memories/subagents/critic/notes.md`, and read them\n  before you start: they make you better at spotting the same mistakes next time.\n- Return only the list of problems and one sentence of overall judgement.\n",
  },
  {
    path: "subagents/critic/skills/fact-check/SKILL.md",
    content:
      "---\nname: fact-check\ndescription: Check a factual claim in a draft against its cited source and classify it as supported, unsupported or contradicted.\n---\n# Fact-check a claim\n\n1. Quote the claim exactly.\n2. Find the source the draft cites for it. No source: the claim is **unsupported**.\n3. Read the source passage. Does it say what the claim says, with the same scope and numbers?\n   - yes: **supported**;\n   - it says something narrower, older or different: **contradicted**, and say how.\n4. Report: `claim` / `verdict` / `why` (one line).\n",
  },
];

/** `examples/research`: anonymous auth, the chat UI, a critic subagent, user memory, an approval gate. */
export const RESEARCH_TEMPLATE: AgentTemplate = {
  name: "research",
  description:
    "A research assistant with the chat UI (anonymous access), a critic subagent with a fact-check skill, per-user memory and an approval gate on write_file",
  requiredSecrets: [],
  files(agentName) {
    return RESEARCH_FILES.map((
      f,
    ) => (f.path === "agent.toml"
      ? {
        path: f.path,
        content: f.content.replace(/^name = "research-assistant"$/m, `name = ${JSON.stringify(agentName)}`),
      }
      : { ...f })
    );
  },
};
