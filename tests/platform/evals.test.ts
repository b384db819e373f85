/**
 * `agentcli eval` end to end, as a CI runs it: the CLI as a child process, the project served in
 * process as `dev` serves it, the model the scripted model server (OpenAI's wire protocol), the
 * rubric's grader scripted too. Bad case files are named with their file and line.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { CLI, makeProject, removeProject } from "../toolchain/_project.ts";

let model: ModelServer;
const dirs: string[] = [];

before(async () => {
  model = await startModelServer();
});
after(async () => {
  for (const d of dirs) removeProject(d);
  await model?.close();
});

function project(files: Record<string, string | null>): string {
  const dir = makeProject({
    ".env": `OPENAI_API_KEY=sk-eval-test\nOPENAI_BASE_URL=${model.openaiBaseUrl}\n`,
    ...files,
  });
  dirs.push(dir);
  return dir;
}

/** Runs the CLI without blocking this process (the model server answers from it). */
function cli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => (stdout += b));
    child.stderr.on("data", (b) => (stderr += b));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const lastUser = (marker: string) => (req: { messages: Array<{ role: string; content: string }> }) =>
  req.messages.filter((m) => m.role === "user").at(-1)?.content.includes(marker) === true &&
  !req.messages.some((m) => m.role === "system" && m.content.includes("You grade a conversation"));
const grader = (req: { system: string }) => req.system.includes("You grade a conversation");

test("cases run concurrently against the agent; the table, JUnit and JSON say which check failed and why", async () => {
  const dir = project({
    "approvals.toml": 'tools = ["edit_file"]\n',
    "evals/greet.yaml":
      "turns:\n  - user: CASE-GREET say hello\nchecks:\n  - text_contains: Hello\n  - status: success\n" +
      "  - tool_not_called: { name: write_file }\n",
    "evals/files.yaml": [
      "name: writes its report and a note",
      "turns:",
      "  - user: CASE-FILES write the report",
      "checks:",
      "  - tool_called: { name: write_file, args: { file_path: /report.md, content: { matches: '^# Report' } } }",
      "  - file_exists: /report.md",
      "  - file_exists: /memories/user/notes.md",
      "  - text_matches: /done/i",
      "",
    ].join("\n"),
    "evals/json.json": JSON.stringify({
      turns: [{ user: "CASE-JSON score it" }],
      checks: [{ json_schema: { type: "object", required: ["score"], properties: { score: { type: "integer" } } } }],
    }),
    "evals/nested/rubric.yaml":
      "turns:\n  - user: CASE-RUBRIC answer politely\nchecks:\n  - rubric: The answer is polite\n",
    "evals/approval.yaml": [
      "turns:",
      "  - user: CASE-APPROVE fix the file",
      "  - decisions: [reject]",
      "checks:",
      "  - status: success",
      "  - text_contains: left it",
      "  - file_exists: /missing.md",
      "",
    ].join("\n"),
  });
  model.script(
    { when: lastUser("CASE-GREET"), text: "Hello there!" },
    {
      when: lastUser("CASE-FILES"),
      toolCalls: [
        { name: "write_file", args: { file_path: "/report.md", content: "# Report\nfindings" } },
        { name: "write_file", args: { file_path: "/memories/user/notes.md", content: "likes reports" } },
      ],
    },
    {
      when: (r) => r.messages.at(-1)?.role === "tool" && r.messages.some((m) => m.content.includes("CASE-FILES")),
      text: "Done.",
    },
    { when: lastUser("CASE-JSON"), text: '```json\n{"score": "high"}\n```' },
    { when: lastUser("CASE-RUBRIC"), text: "Go away." },
    { when: grader, text: '{"pass": false, "reason": "the answer is rude"}' },
    {
      when: lastUser("CASE-APPROVE"),
      toolCalls: [{ name: "edit_file", args: { file_path: "/a.md", old_string: "a", new_string: "b" } }],
    },
    {
      when: (r) => r.messages.some((m) => m.content.includes("CASE-APPROVE")) && r.messages.at(-1)?.role === "tool",
      text: "I left it as it was.",
    },
  );
  const r = await cli(["eval", "--junit", "out/junit.xml", "--json", "out/results.json", "--concurrency", "3"], dir);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /3 of 5 eval cases failed/);
  const row = (name: string) => r.stdout.split("\n").find((l) => l.includes(` ${name} `) || l.endsWith(` ${name}`));
  assert.match(row("greet") ?? "", /^PASS\s+greet\s+\S+s\s+1\s+0\s+success/);
  assert.match(row("writes its report and a note") ?? "", /^PASS .* 1\s+2\s+success/);
  assert.match(r.stdout, /FAIL\s+json/);
  assert.match(r.stdout, /evals\/json\.json:1 json_schema .*: the JSON does not match the schema: score: /);
  assert.match(
    r.stdout,
    /evals\/nested\/rubric\.yaml:4 rubric "The answer is polite": the grader says: the answer is rude/,
  );
  assert.match(r.stdout, /evals\/approval\.yaml:7 file_exists "\/missing\.md": no file \/missing\.md/);
  assert.match(r.stdout, /^PASS|FAIL\s+approval\s+\S+\s+2\s+1\s+success/m);
  const junit = readFileSync(join(dir, "out/junit.xml"), "utf8");
  assert.match(junit, /<testsuite name="agentcli eval" tests="5" failures="3"/);
  assert.match(junit, /<testcase name="greet" classname="evals\/greet.yaml" time="[\d.]+"\/>/);
  assert.match(junit, /<failure message="evals\/nested\/rubric.yaml:4 rubric/);
  const json = JSON.parse(readFileSync(join(dir, "out/results.json"), "utf8"));
  assert.equal(json.total, 5);
  assert.equal(json.failed, 3);
  const files = json.cases.find((c: { name: string }) => c.name === "writes its report and a note");
  assert.deepEqual(files.toolCalls.map((c: { name: string }) => c.name), ["write_file", "write_file"]);
  assert.ok(files.checks.every((c: { passed: boolean }) => c.passed));
  const approval = json.cases.find((c: { name: string }) => c.name === "approval");
  assert.deepEqual(approval.turns.map((t: { status: string }) => t.status), ["interrupted", "success"]);
  const graded = model.requests.find((q) => grader(q));
  assert.match(
    graded!.messages.at(-1)!.content,
    /Rubric:\nThe answer is polite[\s\S]*USER: CASE-RUBRIC answer politely[\s\S]*AGENT \(success\): Go away\./,
  );
  assert.deepEqual(model.pending(), []);
});

test("only the named files run; all passing exits 0", async () => {
  const dir = project({
    "evals/a.yaml": "turns: [{ user: CASE-ONLY-A hi }]\nchecks: [{ text_contains: fine }]\n",
    "evals/b.yaml": "turns: [{ user: CASE-ONLY-B hi }]\nchecks: [{ text_contains: fine }]\n",
  });
  model.script({ when: lastUser("CASE-ONLY-A"), text: "all fine" });
  const r = await cli(["eval", "evals/a.yaml"], dir);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /PASS\s+a /);
  assert.doesNotMatch(r.stdout, /\bb\b.*\d+s/);
  assert.match(r.stdout, /1 passed, 0 failed/);
});

test("a bad case file is named with its line and what is wrong; nothing runs", async () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "evals/typo.yaml",
      "turns:\n  - user: hi\nchecks:\n  - text_contain: x\n",
      /evals\/typo\.yaml:4: unknown or misplaced key "text_contain"/,
    ],
    [
      "evals/empty.yaml",
      "turns: []\nchecks:\n  - status: success\n",
      /evals\/empty\.yaml:1: .*>=1 items.* \(at turns\)/,
    ],
    [
      "evals/status.yaml",
      "turns: [{user: hi}]\nchecks:\n  - status: finished\n",
      /evals\/status\.yaml:3: .*"success".* \(at checks\.0\.status\)/,
    ],
    ["evals/syntax.yaml", "turns:\n  - user: hi\nchecks: [\n", /evals\/syntax\.yaml:\d+: /],
    [
      "evals/broken.json",
      '{"turns": [{"user": "hi"}],\n "checks": [{"status": "success"}]\n',
      /evals\/broken\.json:\d+: /,
    ],
  ];
  for (const [file, text, expected] of cases) {
    const dir = project({ [file]: text });
    const r = await cli(["eval"], dir);
    assert.equal(r.code, 1, `${file}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, expected, file);
    assert.doesNotMatch(r.stderr, /at .*\.ts:\d+|node_modules/, "no stack trace");
  }
  const none = project({});
  const r = await cli(["eval"], none);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no case files \(\*\.yaml, \*\.yml, \*\.json\) in evals/);
  const missing = await cli(["eval", "nope/"], none);
  assert.match(missing.stderr, /"nope" does not exist/);
});
