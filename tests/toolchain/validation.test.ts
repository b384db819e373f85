/**
 * One fixture per validation rule (issue 2, spec 2.1-2.7, 7): each fails for exactly that
 * reason, and the message names the file (and line where there is one) and the fix.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { loadProject } from "../../core/config/load.ts";
import { parseDotenv } from "../../core/config/dotenv.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { AgentcliError } from "../../core/kernel/errors.ts";
import { makeProject, removeProject } from "./_project.ts";

const driver = await loadPlugins(builtinPlugins);

interface Case {
  name: string;
  files: Record<string, string | null>;
  file: string;
  line?: number;
  message: RegExp;
  hint: RegExp;
  env?: Record<string, string>;
  requireEnv?: boolean;
  /** Things file contents cannot say: links, FIFOs, invalid UTF-8. */
  setup?: (dir: string) => void;
}

const at = (dir: string, path: string) => {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  return join(dir, path);
};
const T = (extra: string) => ({ "agent.toml": `[agent]\nname = "x"\nmodel = "openai:gpt-5"\n${extra}` });

const SUB = (name: string, description = "Does research.") => ({
  [`subagents/${name}/agent.toml`]: `[agent]\nname = "${name}"\ndescription = "${description}"\n`,
  [`subagents/${name}/AGENTS.md`]: "You research.\n",
});

const cases: Case[] = [
  {
    name: "TOML syntax error with line and column",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = \n' },
    file: "agent.toml",
    line: 3,
    message: /not valid TOML/,
    hint: /syntax/,
  },
  {
    name: "unknown section",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n\n[tools]\nx = 1\n' },
    file: "agent.toml",
    line: 5,
    message: /unknown section \[tools\]/,
    hint: /\[agent\], \[sandbox\], \[auth\], \[frontend\]/,
  },
  {
    name: "unknown key",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\ntemperature = 1\n' },
    file: "agent.toml",
    line: 4,
    message: /unknown key "temperature" in \[agent\]/,
    hint: /name, description, model/,
  },
  {
    name: "missing [agent]",
    files: { "agent.toml": "[frontend]\nenabled = false\n" },
    file: "agent.toml",
    message: /\[agent\] .*required/,
    hint: /Add a \[agent\] section/,
  },
  {
    name: "missing name",
    files: { "agent.toml": '[agent]\nmodel = "openai:gpt-5"\n' },
    file: "agent.toml",
    line: 1,
    message: /\[agent\]\.name is required/,
    hint: /name = /,
  },
  {
    name: "wrong type",
    files: {
      "agent.toml":
        '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[frontend]\nenabled = "yes"\n[auth]\nprovider = "anonymous"\n',
    },
    file: "agent.toml",
    line: 5,
    message: /\[frontend\]\.enabled/,
    hint: /enabled/,
  },
  {
    name: "name of the wrong type",
    files: { "agent.toml": '[agent]\nname = 42\nmodel = "openai:gpt-5"\n' },
    file: "agent.toml",
    line: 2,
    message: /^\[agent\]\.name must be a string \(got integer\)$/,
    hint: /name = "\.\.\."/,
  },
  {
    name: "sandbox image of the wrong type",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[sandbox]\nimage = 3\n' },
    file: "agent.toml",
    line: 5,
    message: /^\[sandbox\]\.image must be a string \(got integer\)$/,
    hint: /image = "/,
  },
  {
    name: "frontend.enabled as a string",
    files: {
      "agent.toml":
        '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[auth]\nprovider = "anonymous"\n[frontend]\nenabled = "yes"\n',
    },
    file: "agent.toml",
    line: 7,
    message: /^\[frontend\]\.enabled must be a boolean \(true or false\) \(got string\)$/,
    hint: /true or false without quotes/,
  },
  {
    name: "frontend.prompts as a string",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[frontend]\nprompts = "one"\n' },
    file: "agent.toml",
    line: 5,
    message: /^\[frontend\]\.prompts must be an array \(got string\)$/,
    hint: /prompts = \["/,
  },
  {
    name: "frontend.prompts item of the wrong type",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[frontend]\nprompts = ["a", 2]\n' },
    file: "agent.toml",
    line: 5,
    message: /^\[frontend\]\.prompts\[1\] must be a string \(got integer\)$/,
    hint: /Each item of prompts/,
  },
  {
    name: "section written as a key",
    files: { "agent.toml": "agent = 1\n" },
    file: "agent.toml",
    line: 1,
    message: /^\[agent\] must be a table \(got integer\)$/,
    hint: /section header/,
  },
  {
    name: "unterminated string",
    files: { "agent.toml": '[agent]\nname = "x\nmodel = "openai:gpt-5"\n' },
    file: "agent.toml",
    line: 2,
    message: /missing its closing quote/,
    hint: /syntax/,
  },
  {
    name: "subagent [sandbox] section",
    files: {
      ...SUB("r"),
      "subagents/r/agent.toml": '[agent]\nname = "r"\ndescription = "d"\n[sandbox]\nprovider = "none"\n',
    },
    file: "subagents/r/agent.toml",
    line: 4,
    message: /unknown section \[sandbox\]/,
    hint: /only \[agent\].*main agent's agent\.toml/,
  },
  {
    name: "subagent name of the wrong type",
    files: { ...SUB("r"), "subagents/r/agent.toml": '[agent]\nname = 7\ndescription = "d"\n' },
    file: "subagents/r/agent.toml",
    line: 2,
    message: /^\[agent\]\.name must be a string \(got integer\)$/,
    hint: /name = "/,
  },
  {
    name: "model not provider:model",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "gpt-5"\n' },
    file: "agent.toml",
    line: 3,
    message: /provider:model/,
    hint: /model/,
  },
  {
    name: "unknown model provider",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "acme:big"\n' },
    file: "agent.toml",
    line: 3,
    message: /unknown provider "acme"/,
    hint: /openai, anthropic/,
  },
  {
    name: "unknown sandbox provider",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[sandbox]\nprovider = "docker"\n' },
    file: "agent.toml",
    line: 5,
    message: /\[sandbox\]\.provider "docker"/,
    hint: /"sandbox_a"/,
  },
  {
    name: "bad sandbox scope",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[sandbox]\nscope = "global"\n' },
    file: "agent.toml",
    line: 5,
    message: /"thread" or "assistant"/,
    hint: /scope/,
  },
  {
    name: "unknown auth provider",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[auth]\nprovider = "oauth"\n' },
    file: "agent.toml",
    line: 5,
    message: /\[auth\]\.provider "oauth"/,
    hint: /"identity_a"/,
  },
  {
    name: "frontend without auth",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[frontend]\nenabled = true\n' },
    file: "agent.toml",
    line: 5,
    message: /requires an \[auth\] section/,
    hint: /\[auth\]/,
  },
  {
    name: "missing AGENTS.md",
    files: { "AGENTS.md": null },
    file: "AGENTS.md",
    message: /is missing/,
    hint: /Create AGENTS\.md/,
  },
  {
    name: "malformed .env line",
    files: { ".env": "OPENAI_API_KEY=sk-x\nnot a line\n" },
    file: ".env",
    line: 2,
    message: /not a KEY=value line/,
    hint: /NAME=value/,
  },
  {
    name: "missing model credential (deploy)",
    files: { ".env": null },
    requireEnv: true,
    file: ".env",
    message: /OPENAI_API_KEY.*not set/,
    hint: /OPENAI_API_KEY=/,
  },
  {
    name: "no credentials for a default model",
    files: { "agent.toml": '[agent]\nname = "x"\n', ".env": null },
    requireEnv: true,
    file: ".env",
    message:
      /^none of OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY, GOOGLE_CLOUD_PROJECT, NVIDIA_API_KEY is set \(for a default model/,
    hint: /one of them/,
  },
  {
    name: "missing sandbox credential",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[sandbox]\nprovider = "sandbox_b"\n' },
    requireEnv: true,
    file: ".env",
    message: /SANDBOX_B_TOKEN_ID, SANDBOX_B_TOKEN_SECRET/,
    hint: /SANDBOX_B_TOKEN_ID=/,
  },
  {
    name: "missing identity_a variables",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[auth]\nprovider = "identity_a"\n' },
    requireEnv: true,
    file: ".env",
    message: /IDENTITY_A_URL, IDENTITY_A_PUBLISHABLE_DEFAULT_KEY/,
    hint: /IDENTITY_A_URL=/,
  },
  {
    name: "identity_b publishable key only with frontend",
    files: {
      "agent.toml":
        '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[auth]\nprovider = "identity_b"\n[frontend]\nenabled = true\n',
      ".env": "OPENAI_API_KEY=k\nIDENTITY_B_SECRET_KEY=s\n",
    },
    requireEnv: true,
    file: ".env",
    message: /IDENTITY_B_PUBLISHABLE_KEY/,
    hint: /IDENTITY_B_PUBLISHABLE_KEY=/,
  },
  {
    name: "mcp.json stdio server",
    files: { "mcp.json": '{\n  "mcpServers": {\n    "files": {"command": "npx", "args": ["x"]}\n  }\n}\n' },
    file: "mcp.json",
    line: 3,
    message: /server "files".*"stdio"/,
    hint: /"http"/,
  },
  {
    name: "mcp.json unresolved variable",
    files: {
      "mcp.json":
        '{"mcpServers": {"docs": {"transport": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}',
    },
    file: "mcp.json",
    line: 1,
    message: /\$\{DOCS_TOKEN\}.*not set/,
    hint: /Set DOCS_TOKEN/,
  },
  {
    name: "mcp.json invalid JSON",
    files: { "mcp.json": '{\n  "mcpServers": {,}\n}' },
    file: "mcp.json",
    line: 2,
    message: /not valid JSON/,
    hint: /mcpServers/,
  },
  {
    name: "mcp.json bad transport",
    files: { "mcp.json": '{"mcpServers": {"x": {"transport": "websocket", "url": "https://x"}}}' },
    file: "mcp.json",
    message: /transport "websocket"/,
    hint: /"http" or "sse"/,
  },
  {
    name: "skill without frontmatter",
    files: { "skills/review/SKILL.md": "# Review\n" },
    file: "skills/review/SKILL.md",
    line: 1,
    message: /no YAML frontmatter/,
    hint: /name:/,
  },
  {
    name: "skill frontmatter with an unquoted ': '",
    files: { "skills/review/SKILL.md": "---\nname: review\ndescription: Review: drafts: now\n---\n" },
    file: "skills/review/SKILL.md",
    line: 3,
    message: /^has invalid YAML frontmatter: Nested mappings are not allowed in compact mappings$/,
    hint: /Quote a value/,
  },
  {
    name: "skill frontmatter with an unclosed quote",
    files: { "skills/review/SKILL.md": "---\nname: 'review\ndescription: d\n---\n" },
    file: "skills/review/SKILL.md",
    message: /^has invalid YAML frontmatter: Missing closing 'quote$/,
    hint: /Fix the YAML/,
  },
  {
    name: "skill without description",
    files: { "skills/review/SKILL.md": "---\nname: review\n---\n" },
    file: "skills/review/SKILL.md",
    message: /no "description"/,
    hint: /description:/,
  },
  {
    name: "skill name does not match folder",
    files: { "skills/review/SKILL.md": "---\nname: critique\ndescription: d\n---\n" },
    file: "skills/review/SKILL.md",
    line: 2,
    message: /does not match its folder "review"/,
    hint: /Rename/,
  },
  {
    name: "skill folder without SKILL.md",
    files: { "skills/notes/README.md": "x" },
    file: "skills/notes",
    message: /no SKILL\.md/,
    hint: /SKILL\.md/,
  },
  {
    name: "subagent empty description",
    files: { ...SUB("researcher", "  ") },
    file: "subagents/researcher/agent.toml",
    line: 3,
    message: /description must not be empty/,
    hint: /description/,
  },
  {
    name: "subagent missing description",
    files: { "subagents/r/agent.toml": '[agent]\nname = "r"\n', "subagents/r/AGENTS.md": "x" },
    file: "subagents/r/agent.toml",
    line: 1,
    message: /description is required/,
    hint: /description = /,
  },
  {
    name: "subagent names not unique",
    files: {
      ...SUB("a"),
      "subagents/b/agent.toml": '[agent]\nname = "a"\ndescription = "d"\n',
      "subagents/b/AGENTS.md": "x",
    },
    file: "subagents/b/agent.toml",
    line: 2,
    message: /"a" is already used/,
    hint: /unique/,
  },
  {
    name: "subagent without AGENTS.md",
    files: { "subagents/r/agent.toml": '[agent]\nname = "r"\ndescription = "d"\n' },
    file: "subagents/r",
    message: /no AGENTS\.md/,
    hint: /AGENTS\.md/,
  },
  {
    name: "subagent unknown section",
    files: {
      ...SUB("r"),
      "subagents/r/agent.toml": '[agent]\nname = "r"\ndescription = "d"\n[auth]\nprovider = "anonymous"\n',
    },
    file: "subagents/r/agent.toml",
    line: 4,
    message: /unknown section \[auth\]/,
    hint: /^(?!.*Allowed sections).*only \[agent\]/,
  },
  {
    name: "subagent mcp.json stdio",
    files: { ...SUB("r"), "subagents/r/mcp.json": '{"mcpServers": {"s": {"transport": "stdio", "command": "x"}}}' },
    file: "subagents/r/mcp.json",
    message: /"stdio"/,
    hint: /"http"/,
  },
  {
    name: "subagent model credential",
    files: {
      ...SUB("r"),
      "subagents/r/agent.toml": '[agent]\nname = "r"\ndescription = "d"\nmodel = "anthropic:claude-sonnet-4-5"\n',
    },
    requireEnv: true,
    file: ".env",
    message: /ANTHROPIC_API_KEY.*anthropic:claude/,
    hint: /ANTHROPIC_API_KEY=/,
  },
  {
    name: "approvals unterminated string",
    files: { "approvals.toml": 'tools = ["execute]\n' },
    file: "approvals.toml",
    line: 1,
    message: /missing its closing quote/,
    hint: /tools = /,
  },
  {
    name: "approvals unknown tool",
    files: { "approvals.toml": 'tools = ["rm_rf"]\n' },
    file: "approvals.toml",
    line: 1,
    message: /"rm_rf" is not a built-in tool/,
    hint: /write_file/,
  },
  // Issue 16: malformed projects that used to be accepted or mangled, each one error naming file, line and fix.
  {
    name: "agent name ending in a space",
    files: { "agent.toml": '[agent]\nname = "x "\nmodel = "openai:gpt-5"\n' },
    file: "agent.toml",
    line: 2,
    message: /must start and end with a letter or digit/,
    hint: /name/,
  },
  {
    name: "section name in the wrong case",
    files: { "agent.toml": '[Agent]\nname = "x"\n' },
    file: "agent.toml",
    line: 1,
    message: /^unknown section \[Agent\]$/,
    hint: /lower-case: write \[agent\]/,
  },
  {
    name: "empty [auth].provider",
    files: T('[auth]\nprovider = ""\n'),
    file: "agent.toml",
    line: 5,
    message: /\[auth\]\.provider must not be empty/,
    hint: /provider/,
  },
  {
    name: "model with an upper-case provider",
    files: { "agent.toml": '[agent]\nname = "x"\nmodel = "OpenAI:gpt-5"\n' },
    file: "agent.toml",
    line: 3,
    message: /provider:model/,
    hint: /model/,
  },
  {
    name: "empty frontend prompt",
    files: T('[frontend]\nprompts = ["a", ""]\n'),
    file: "agent.toml",
    line: 5,
    message: /^\[frontend\]\.prompts\[1\] must not be empty$/,
    hint: /prompts/,
  },
  {
    name: "empty sandbox image",
    files: T('[sandbox]\nimage = ""\n'),
    file: "agent.toml",
    line: 5,
    message: /image must not be empty/,
    hint: /image/,
  },
  {
    name: "agent.toml that is not UTF-8",
    files: {},
    setup: (d) =>
      writeFileSync(
        join(d, "agent.toml"),
        Buffer.concat([
          Buffer.from('[agent]\nname = "x"\ndescription = "caf'),
          Buffer.from([0xe9]),
          Buffer.from('"\n'),
        ]),
      ),
    file: "agent.toml",
    line: 3,
    message: /not valid UTF-8/,
    hint: /UTF-8/,
  },
  {
    name: "AGENTS.md is a directory",
    files: { "AGENTS.md": null, "AGENTS.md/x.md": "x" },
    file: "AGENTS.md",
    message: /is a directory; a file is expected/,
    hint: /file/,
  },
  {
    name: "AGENTS.md links outside the project",
    files: { "AGENTS.md": null },
    setup: (d) => symlinkSync("/etc/passwd", join(d, "AGENTS.md")),
    file: "AGENTS.md",
    message: /^is a symbolic link to "\/etc\/passwd", outside the project$/,
    hint: /Copy the file into the project/,
  },
  {
    name: "a skill file links to .env",
    files: {},
    setup: (d) => symlinkSync("../../.env", at(d, "skills/review/notes.md")),
    file: "skills/review/notes.md",
    message: /symbolic link to "\.env", a dotfile/,
    hint: /deployment secrets/,
  },
  {
    name: "a broken link in user/",
    files: { "user/AGENTS.md": "x" },
    setup: (d) => symlinkSync("nowhere.md", at(d, "user/gone.md")),
    file: "user/gone.md",
    message: /broken symbolic link/,
    hint: /Remove the link/,
  },
  {
    name: "a directory link loop in a skill",
    files: {},
    setup: (d) => symlinkSync("..", at(d, "skills/review/again")),
    file: "skills/review/again/review",
    message: /already included \(a loop\)/,
    hint: /Remove the link/,
  },
  {
    name: "a FIFO in user/ (never opened)",
    files: { "user/AGENTS.md": "x" },
    setup: (d) => execFileSync("mkfifo", [at(d, "user/pipe")]),
    file: "user/pipe",
    message: /not a regular file/,
    hint: /Remove it/,
  },
  {
    name: "project files over the bundle limit",
    files: { "user/big.txt": "x".repeat(4096) },
    env: { AGENTCLI_BUNDLE_MAX_MB: "0.002" },
    file: "user/big.txt",
    message: /over the bundle limit of 0 MiB/,
    hint: /AGENTCLI_BUNDLE_MAX_MB/,
  },
  {
    name: "a file name too long for a bundle",
    files: { [`user/${"n".repeat(120)}.md`]: "x" },
    file: `user/${"n".repeat(120)}.md`,
    message: /path too long for a bundle/,
    hint: /Shorten/,
  },
  {
    name: "subagents/ is a file",
    files: { subagents: "x" },
    file: "subagents",
    message: /must be a directory/,
    hint: /subagents\/<name>/,
  },
  { name: "user/ is a file", files: { user: "x" }, file: "user", message: /must be a directory/, hint: /folder/ },
  {
    name: "user/AGENTS.md is a directory",
    files: { "user/AGENTS.md/x": "x" },
    file: "user/AGENTS.md",
    message: /is a directory/,
    hint: /file/,
  },
  {
    name: "empty subagent folder",
    files: { "subagents/r/notes.txt": "x" },
    file: "subagents/r",
    message: /^has no agent\.toml and no AGENTS\.md/,
    hint: /subagents\/r\/agent\.toml .* and subagents\/r\/AGENTS\.md/,
  },
  {
    name: "subagent AGENTS.md is a directory",
    files: { ...SUB("r"), "subagents/r/AGENTS.md": null, "subagents/r/AGENTS.md/x": "x" },
    file: "subagents/r/AGENTS.md",
    message: /is a directory/,
    hint: /file/,
  },
  {
    name: "subagent skills/ is a file",
    files: { ...SUB("r"), "subagents/r/skills": "x" },
    file: "subagents/r/skills",
    message: /must be a directory/,
    hint: /SKILL\.md/,
  },
  {
    name: "subagent mcp.json is a directory",
    files: { ...SUB("r"), "subagents/r/mcp.json/x": "x" },
    file: "subagents/r/mcp.json",
    message: /is a directory/,
    hint: /file/,
  },
  {
    name: "mcp.json is a directory",
    files: { "mcp.json": null, "mcp.json/x": "x" },
    file: "mcp.json",
    message: /is a directory/,
    hint: /file/,
  },
  {
    name: "approvals.toml is a directory",
    files: { "approvals.toml/x": "x" },
    file: "approvals.toml",
    message: /is a directory/,
    hint: /file/,
  },
  {
    name: "mcp.json server named twice",
    files: {
      "mcp.json":
        '{"mcpServers": {\n  "a": {"transport": "http", "url": "https://x"},\n  "a": {"transport": "sse", "url": "https://y"}\n}}',
    },
    file: "mcp.json",
    line: 3,
    message: /key "a" appears twice/,
    hint: /Keep one/,
  },
  {
    name: "mcp.json transport and type disagree",
    files: { "mcp.json": '{"mcpServers": {"a": {"transport": "http", "type": "stdio", "url": "https://x"}}}' },
    file: "mcp.json",
    line: 1,
    message: /"transport" \("http"\) and "type" \("stdio"\) disagree/,
    hint: /Keep one/,
  },
  {
    name: "mcp.json infinite timeout",
    files: { "mcp.json": '{"mcpServers": {"a": {"transport": "http", "url": "https://x", "timeout": 1e400}}}' },
    file: "mcp.json",
    line: 1,
    message: /"timeout" must be a positive number/,
    hint: /"timeout": 30/,
  },
  {
    name: "mcp.json top level is an array",
    files: { "mcp.json": "[]" },
    file: "mcp.json",
    line: 1,
    message: /must be an object with "mcpServers"/,
    hint: /mcpServers/,
  },
  {
    name: "mcp.json server url not http",
    files: { "mcp.json": '{"mcpServers": {"a": {"transport": "sse", "url": "ws://x"}}}' },
    file: "mcp.json",
    line: 1,
    message: /not an http\(s\) URL/,
    hint: /https:/,
  },
  {
    name: ".env text after a closing quote",
    files: { ".env": 'OPENAI_API_KEY="k"junk\n' },
    file: ".env",
    line: 1,
    message: /text after its closing "/,
    hint: /inside the quotes/,
  },
  {
    name: ".env key set twice",
    files: { ".env": "OPENAI_API_KEY=k\nOPENAI_API_KEY=j\n" },
    file: ".env",
    line: 2,
    message: /OPENAI_API_KEY is set twice to different values \(first on line 1\)/,
    hint: /Keep one/,
  },
  {
    name: ".env value with NUL",
    files: { ".env": "OPENAI_API_KEY=k\u0000x\n" },
    file: ".env",
    line: 1,
    message: /NUL/,
    hint: /Remove it/,
  },
  {
    name: ".env quote never closed",
    files: { ".env": 'OPENAI_API_KEY=k\nPEM="-----BEGIN\nabc\n' },
    file: ".env",
    line: 2,
    message: /value of PEM has no closing "/,
    hint: /Close the quote/,
  },
  {
    name: ".env that is not UTF-8",
    files: {},
    setup: (d) => writeFileSync(join(d, ".env"), Buffer.from([0x4f, 0x3d, 0x31, 0x0a, 0x50, 0x3d, 0xff, 0x0a])),
    file: ".env",
    line: 2,
    message: /not valid UTF-8/,
    hint: /UTF-8/,
  },
  {
    name: "SKILL.md frontmatter is a list",
    files: { "skills/review/SKILL.md": "---\n- a\n- b\n---\n" },
    file: "skills/review/SKILL.md",
    line: 2,
    message: /must be a mapping/,
    hint: /name: review/,
  },
  {
    name: "SKILL.md that is not UTF-8",
    files: {},
    setup: (d) =>
      writeFileSync(
        join(d, "skills/review/SKILL.md"),
        Buffer.concat([
          Buffer.from("---\nname: review\ndescription: r"),
          Buffer.from([0xc3, 0x28]),
          Buffer.from("\n---\n"),
        ]),
      ),
    file: "skills/review/SKILL.md",
    line: 3,
    message: /not valid UTF-8/,
    hint: /UTF-8/,
  },
  {
    name: "SKILL.md is a directory",
    files: { "skills/review/SKILL.md": null, "skills/review/SKILL.md/x": "x" },
    file: "skills/review/SKILL.md",
    message: /is a directory/,
    hint: /file/,
  },
  {
    name: "approvals unknown MCP server",
    files: { "approvals.toml": 'tools = ["docs/delete"]\n' },
    file: "approvals.toml",
    line: 1,
    message: /MCP server "docs"/,
    hint: /mcp\.json/,
  },
];

for (const c of cases) {
  test(`rejects: ${c.name}`, async () => {
    const dir = makeProject(c.files);
    try {
      c.setup?.(dir);
      await assert.rejects(
        loadProject(join(dir, "agent.toml"), { driver, env: c.env ?? {}, requireEnv: c.requireEnv ?? false, cwd: dir }),
        (err: unknown) => {
          assert.ok(err instanceof AgentcliError, String(err));
          assert.equal(
            err.diagnostics.length,
            1,
            `expected exactly one problem, got:\n${
              err.diagnostics.map((d) => `${d.file}:${d.line}: ${d.message}`).join("\n")
            }`,
          );
          const d = err.diagnostics[0]!;
          assert.equal(d.file, c.file);
          if (c.line !== undefined) assert.equal(d.line, c.line, d.message);
          assert.match(d.message, c.message);
          assert.match(d.hint ?? "", c.hint);
          return true;
        },
      );
    } finally {
      removeProject(dir);
    }
  });
}

test("reports every problem of a project in one run", async () => {
  const dir = makeProject({
    "agent.toml": '[agent]\nname = "x"\nmodel = "acme:x"\ncolor = 1\n[extra]\n',
    "mcp.json": '{"mcpServers": {"s": {"command": "x"}}}',
    "skills/review/SKILL.md": "no frontmatter",
  });
  try {
    await assert.rejects(
      loadProject(join(dir, "agent.toml"), { driver, env: {}, requireEnv: false, cwd: dir }),
      (err: AgentcliError) => {
        const files = err.diagnostics.map((d) => d.file).sort();
        assert.deepEqual(files, ["agent.toml", "agent.toml", "agent.toml", "mcp.json", "skills/review/SKILL.md"]);
        assert.match(err.message, /5 problems/);
        return true;
      },
    );
  } finally {
    removeProject(dir);
  }
});

test("applies every default of the spec", async () => {
  const dir = makeProject({
    "agent.toml":
      '[agent]\nname = "x"\n[sandbox]\nprovider = "sandbox_a"\n[auth]\nprovider = "anonymous"\n[frontend]\nenabled = true\n',
    ".env": "ANTHROPIC_API_KEY=k\nSANDBOX_A_API_KEY=s\n",
  });
  try {
    const p = await loadProject(join(dir, "agent.toml"), { driver, env: {}, requireEnv: true, cwd: dir });
    assert.equal(p.config.agent.model, "anthropic:claude-sonnet-4-5", "default model follows the credential chain");
    assert.deepEqual(p.config.sandbox, {
      provider: "sandbox_a",
      template: "agentcli-default",
      image: "python:3",
      scope: "thread",
    });
    assert.equal(p.config.frontend.app_name, "x");
    assert.ok(p.config.frontend.subtitle.length > 0);
    assert.ok(p.config.frontend.prompts.length > 0);
    assert.equal(p.config.user.enabled, false);
  } finally {
    removeProject(dir);
  }
});

test("default model chain: openai, anthropic, google_genai, google_vertexai, nvidia", async () => {
  const chain: Array<[Record<string, string>, string]> = [
    [{ OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k" }, "openai:"],
    [{ ANTHROPIC_API_KEY: "k", GOOGLE_API_KEY: "k" }, "anthropic:"],
    [{ GOOGLE_API_KEY: "k", GOOGLE_CLOUD_PROJECT: "p" }, "google_genai:"],
    [{ GOOGLE_CLOUD_PROJECT: "p", NVIDIA_API_KEY: "k" }, "google_vertexai:"],
    [{ NVIDIA_API_KEY: "k" }, "nvidia:"],
  ];
  for (const [env, prefix] of chain) {
    const dir = makeProject({ "agent.toml": '[agent]\nname = "x"\n', ".env": null });
    try {
      const p = await loadProject(join(dir, "agent.toml"), { driver, env, requireEnv: true, cwd: dir });
      assert.ok(p.config.agent.model?.startsWith(prefix), `${JSON.stringify(env)} -> ${p.config.agent.model}`);
    } finally {
      removeProject(dir);
    }
  }
});

test(".env does not override variables already set in the environment", async () => {
  const dir = makeProject({ ".env": "OPENAI_API_KEY=from-dotenv\nEXTRA=1\n" });
  try {
    const p = await loadProject(join(dir, "agent.toml"), {
      driver,
      env: { OPENAI_API_KEY: "from-env" },
      requireEnv: true,
      cwd: dir,
    });
    assert.equal(p.env.OPENAI_API_KEY, "from-env");
    assert.equal(p.env.EXTRA, "1");
  } finally {
    removeProject(dir);
  }
});

test("dotfiles are skipped; user/ and subagents are discovered", async () => {
  const dir = makeProject({
    "skills/.hidden/SKILL.md": "junk",
    "skills/review/.notes": "junk",
    "user/AGENTS.md": "About the user\n",
    "subagents/researcher/agent.toml": '[agent]\nname = "researcher"\ndescription = "Finds sources."\n',
    "subagents/researcher/AGENTS.md": "You research.\n",
    "subagents/researcher/skills/cite/SKILL.md": "---\nname: cite\ndescription: Cite sources.\n---\n",
    "mcp.json":
      '{"mcpServers": {"docs": {"transport": "sse", "url": "https://docs/${HOST_PATH}", "headers": {"X-Key": "${DOCS_KEY}"}}}}',
    ".env": "OPENAI_API_KEY=k\nHOST_PATH=sse\nDOCS_KEY=secret-docs-key\n",
  });
  try {
    const p = await loadProject(join(dir, "agent.toml"), { driver, env: {}, requireEnv: true, cwd: dir });
    assert.deepEqual([...p.files.keys()].sort(), [
      "AGENTS.md",
      "agent.toml",
      "mcp.json",
      "skills/review/SKILL.md",
      "subagents/researcher/AGENTS.md",
      "subagents/researcher/agent.toml",
      "subagents/researcher/skills/cite/SKILL.md",
      "user/AGENTS.md",
    ]);
    assert.equal(p.config.user.enabled, true);
    assert.equal(p.config.subagents[0]!.name, "researcher");
    assert.equal(p.config.subagents[0]!.model, null);
    assert.deepEqual(p.config.subagents[0]!.skills.map((s) => s.name), ["cite"]);
    assert.equal(
      p.config.mcp.docs!.headers!["X-Key"],
      "${DOCS_KEY}",
      "the bundle keeps variable references, not secret values",
    );
  } finally {
    removeProject(dir);
  }
});

test("duplicate subagent names are reported even when one of the subagents has another problem", async () => {
  for (
    const [first, second] of [
      ['[agent]\nname = "a"\ndescription = "d"\ncolor = 1\n', '[agent]\nname = "a"\ndescription = "d"\n'],
      ['[agent]\nname = "a"\ndescription = "d"\n', '[agent]\nname = "a"\n'],
    ]
  ) {
    const dir = makeProject({
      "subagents/a/agent.toml": first!,
      "subagents/a/AGENTS.md": "x",
      "subagents/b/agent.toml": second!,
      "subagents/b/AGENTS.md": "x",
    });
    try {
      await assert.rejects(
        loadProject(join(dir, "agent.toml"), { driver, env: {}, requireEnv: false, cwd: dir }),
        (err: AgentcliError) => {
          const shown = err.diagnostics.map((d) => `${d.file}:${d.line}: ${d.message}`);
          assert.equal(err.diagnostics.length, 2, shown.join("\n"));
          assert.ok(
            shown.includes('subagents/b/agent.toml:2: subagent name "a" is already used by subagents/a/agent.toml'),
            shown.join("\n"),
          );
          return true;
        },
      );
    } finally {
      removeProject(dir);
    }
  }
});

test(".env parses as the dotenv package does: multi-line quoted values, backticks, comments, export, KEY: value", async () => {
  const { default: dotenv } = await import("dotenv");
  const samples = [
    'PEM="-----BEGIN KEY-----\nabc\ndef\n-----END KEY-----"\nNEXT=1\n',
    "SINGLE='one\ntwo'\n",
    "TICK=`say \"hi\"\nand 'bye'`\n",
    "ESCAPED=\"a\\nb\\rc\"\nLITERAL='a\\nb'\n",
    "export A=1 # comment\nB: two\nC=a#b\nD=\nE = spaced value  \n",
    'Q="a\\"b" # comment\nDOT.KEY-1=x\r\nCRLF="x\r\ny"\r\n',
  ];
  for (const text of samples) {
    const { values, problems } = parseDotenv(text, ".env");
    assert.deepEqual(problems, [], JSON.stringify(text));
    assert.deepEqual(values, { ...dotenv.parse(text) }, JSON.stringify(text));
  }
  // init writes `OPENAI_API_KEY=` as a placeholder; a key appended below it fills it in.
  const dir = makeProject({ ".env": 'OPENAI_API_KEY=\nOPENAI_API_KEY="sk-\nsecond-line"\n' });
  try {
    const p = await loadProject(join(dir, "agent.toml"), { driver, env: {}, requireEnv: true, cwd: dir });
    assert.equal(p.secrets.OPENAI_API_KEY, "sk-\nsecond-line");
  } finally {
    removeProject(dir);
  }
});

test("a symbolic link inside the project is followed: its target's bytes are bundled under the link's path", async () => {
  const dir = makeProject({ "docs/guide.md": "# Shared guide\n" });
  try {
    symlinkSync("../../docs/guide.md", join(dir, "skills/review/guide.md"));
    const p = await loadProject(join(dir, "agent.toml"), { driver, env: {}, requireEnv: false, cwd: dir });
    assert.equal(new TextDecoder().decode(p.files.get("skills/review/guide.md")), "# Shared guide\n");
  } finally {
    removeProject(dir);
  }
});
