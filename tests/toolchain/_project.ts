/** Test fixtures: a valid project written to a temp dir, with per-test overrides. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawnSync } from "node:child_process";

export const VALID: Record<string, string> = {
  "agent.toml": '[agent]\nname = "fixture"\nmodel = "openai:gpt-5"\n',
  "AGENTS.md": "# Fixture\n",
  ".env": "OPENAI_API_KEY=sk-fixture-secret-value\n",
  "mcp.json": '{"mcpServers": {}}\n',
  "skills/review/SKILL.md": "---\nname: review\ndescription: Review drafts.\n---\nBody\n",
};

/** Writes `files` (null deletes a VALID file) to a fresh temp dir; returns its path. */
export function makeProject(overrides: Record<string, string | null> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-test-"));
  const files = { ...VALID, ...overrides };
  for (const [path, content] of Object.entries(files)) {
    if (content === null) continue;
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

export function removeProject(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export const CLI = new URL("../../bin/agentcli.js", import.meta.url).pathname;

/** Runs the CLI from sources as a child process, with a clean environment. */
export function cli(args: string[], opts: { cwd: string; env?: Record<string, string>; input?: string }) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...opts.env },
    input: opts.input ?? "",
    encoding: "utf8",
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, output: r.stdout + r.stderr };
}
