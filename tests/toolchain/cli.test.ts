/** The CLI as a process: init, deploy --dry-run, errors, and secrets never printed. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VERSION } from "../../core/kernel/version.ts";
import { execFileSync, spawn } from "node:child_process";
import { CLI, cli, makeProject, removeProject } from "./_project.ts";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

test("--version prints the package version (>= 0.0.43, spec 9)", () => {
  const r = cli(["--version"], { cwd: tmpdir() });
  assert.equal(r.code, 0);
  assert.equal(r.stdout.trim(), `agentcli ${pkg.version}`);
  assert.equal(VERSION, pkg.version);
  const [maj, min, patch] = pkg.version.split(".").map(Number);
  assert.ok(maj > 0 || min > 0 || patch >= 43);
});

test("--help everywhere", () => {
  for (const cmd of [[], ["init"], ["deploy"], ["schema"]]) {
    const r = cli([...cmd, "--help"], { cwd: tmpdir() });
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /Usage: agentcli/);
  }
});

test("unknown command and unknown option are user errors with a hint", () => {
  const a = cli(["deplyo"], { cwd: tmpdir() });
  assert.equal(a.code, 2, "a usage error exits 2");
  assert.match(a.stderr, /unknown command/);
  const b = cli(["deploy", "--dryrun"], { cwd: tmpdir() });
  assert.equal(b.code, 2);
  assert.match(b.stderr, /unknown option "--dryrun"/);
  assert.match(b.stderr, /agentcli deploy --help/);
  assert.doesNotMatch(b.stderr, /at .*\.ts:\d+/, "no stack trace for a user error");
});

test("init creates exactly the spec's files and refuses to overwrite without --force", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-init-"));
  try {
    const r = cli(["init", "my-agent"], { cwd: dir });
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /Next steps/);
    const root = join(dir, "my-agent");
    assert.deepEqual(readdirSync(root).sort(), [
      ".agentcli",
      ".env",
      "AGENTS.md",
      "agent.toml",
      "evals",
      "mcp.json",
      "skills",
    ]);
    assert.deepEqual(
      readdirSync(join(root, ".agentcli")),
      ["agent.schema.json"],
      "beside the spec's files, only agent.toml's schema in agentcli's own folder",
    );
    assert.deepEqual(readdirSync(join(root, "skills")), ["review"]);
    assert.deepEqual(JSON.parse(readFileSync(join(root, "mcp.json"), "utf8")), { mcpServers: {} });
    assert.match(
      readFileSync(join(root, "agent.toml"), "utf8"),
      /^#:schema \.\/\.agentcli\/agent\.schema\.json\n/,
      "the schema resolves offline, from the project",
    );
    writeFileSync(join(root, "AGENTS.md"), "my edits");
    const again = cli(["init", "my-agent"], { cwd: dir });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exist/);
    assert.match(again.stderr, /--force/);
    assert.equal(readFileSync(join(root, "AGENTS.md"), "utf8"), "my edits", "nothing was overwritten");
    const forced = cli(["init", "my-agent", "--force"], { cwd: dir });
    assert.equal(forced.code, 0, forced.output);
    assert.notEqual(readFileSync(join(root, "AGENTS.md"), "utf8"), "my edits");
    const dry = cli(["deploy", "--dry-run"], { cwd: root });
    assert.equal(dry.code, 0, dry.output);
    assert.match(dry.stdout, /Agent: +my-agent/);
    assert.match(dry.stderr, /beta/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("deploy --dry-run prints the summary, secrets by name only, and --json for CI", () => {
  const dir = makeProject({
    "agent.toml":
      '[agent]\nname = "fixture"\nmodel = "openai:gpt-5"\n[auth]\nprovider = "anonymous"\n[frontend]\nenabled = true\n',
    "subagents/researcher/agent.toml": '[agent]\nname = "researcher"\ndescription = "Finds sources."\n',
    "subagents/researcher/AGENTS.md": "You research.\n",
    "mcp.json":
      '{"mcpServers": {"docs": {"transport": "http", "url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}',
    ".env": "OPENAI_API_KEY=sk-fixture-secret-value\nDOCS_TOKEN=docs-secret-token\n",
  });
  try {
    const r = cli(["deploy", "--dry-run"], { cwd: dir });
    assert.equal(r.code, 0, r.output);
    for (
      const line of [
        /Model: +openai:gpt-5/,
        /Auth: +PUBLIC \(anonymous\).*UX only/,
        /Skills: +review/,
        /researcher \(model: inherited/,
        /docs \(http\) https:\/\/docs\.example\/mcp/,
        /Secrets: +DOCS_TOKEN, OPENAI_API_KEY/,
        /Bundle: +\.agentcli\/bundle\.tgz/,
      ]
    ) {
      assert.match(r.stdout, line);
    }
    const j = cli(["deploy", "--dry-run", "--json"], { cwd: dir });
    assert.equal(j.code, 0, j.output);
    const summary = JSON.parse(j.stdout);
    assert.equal(summary.agent.name, "fixture");
    assert.deepEqual(summary.secrets, ["DOCS_TOKEN", "OPENAI_API_KEY"]);
    assert.ok(summary.requires.packages.includes("@langchain/openai"));
    assert.ok(summary.requires.packages.includes("@modelcontextprotocol/sdk"));
    assert.ok(summary.bundle.bytes > 0);
    for (const out of [r.output, j.output]) {
      assert.ok(
        !out.includes("sk-fixture-secret-value") && !out.includes("docs-secret-token"),
        "a secret value was printed",
      );
    }
    const bundle = readFileSync(join(dir, ".agentcli/bundle.tgz"));
    assert.ok(
      !bundle.includes("sk-fixture-secret-value") && !bundle.includes("docs-secret-token"),
      "a secret value is inside the bundle",
    );
  } finally {
    removeProject(dir);
  }
});

test("a config error fails with file:line and writes no bundle", () => {
  const dir = makeProject({ "agent.toml": '[agent]\nname = "x"\nmodle = "openai:gpt-5"\n' });
  try {
    const r = cli(["deploy", "--dry-run"], { cwd: dir });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /agent\.toml:3: unknown key "modle" in \[agent\]/);
    assert.equal(existsSync(join(dir, ".agentcli/bundle.tgz")), false);
  } finally {
    removeProject(dir);
  }
});

test("deploy refuses up front without credentials, naming each variable", () => {
  const dir = makeProject({ ".env": null });
  try {
    const r = cli(["deploy"], { cwd: dir });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /OPENAI_API_KEY/);
    const p = cli(["deploy"], { cwd: dir, env: { OPENAI_API_KEY: "sk-x" } });
    assert.equal(p.code, 1);
    assert.match(p.stderr, /PLATFORM_API_KEY is not set/);
  } finally {
    removeProject(dir);
  }
});

test("anonymous deploy needs confirmation: refused without a terminal unless --yes", () => {
  const dir = makeProject({
    "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[auth]\nprovider = "anonymous"\n',
  });
  try {
    const r = cli(["deploy"], {
      cwd: dir,
      env: { PLATFORM_API_KEY: "pk", AGENTCLI_PLATFORM_URL: "http://127.0.0.1:9" },
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no terminal to confirm/);
    assert.match(r.stderr, /--yes/);
  } finally {
    removeProject(dir);
  }
});

test("the --config path may point anywhere; messages name files relative to the current folder", () => {
  const dir = makeProject({ "agent.toml": '[agent]\nname = "x"\n[nope]\n' });
  try {
    const r = cli(["deploy", "--dry-run", "--config", join(dir, "agent.toml")], { cwd: dir });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /agent\.toml:3: unknown section \[nope\]/);
    const missing = cli(["deploy", "--dry-run", "--config", "nowhere/agent.toml"], { cwd: dir });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /"nowhere\/agent\.toml" does not exist/);
  } finally {
    removeProject(dir);
  }
});

test("the shipped JSON Schema is generated from the validator's schema", () => {
  const r = cli(["schema"], { cwd: tmpdir() });
  assert.equal(r.code, 0, r.output);
  const shipped = readFileSync(new URL("../../schema/agent.schema.json", import.meta.url), "utf8");
  assert.deepEqual(
    JSON.parse(r.stdout),
    JSON.parse(shipped),
    "schema/agent.schema.json is stale: run `npx agentcli schema > schema/agent.schema.json`",
  );
  const schema = JSON.parse(shipped);
  assert.deepEqual(Object.keys(schema.properties), ["agent", "sandbox", "auth", "frontend"]);
  assert.equal(schema.additionalProperties, false);
});

test("--config <dir> means <dir>/agent.toml; a directory without one is named plainly", () => {
  const parent = mkdtempSync(join(tmpdir(), "agentcli-cfgdir-"));
  const dir = makeProject();
  try {
    const r = cli(["deploy", "--dry-run", "--config", dir], { cwd: parent });
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /Agent: +fixture/);
    const empty = cli(["deploy", "--dry-run", "--config", "."], { cwd: parent });
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /"agent\.toml" does not exist/);
    assert.doesNotMatch(empty.output, /Cannot read properties|charCodeAt|is missing/);
    assert.match(cli(["deploy", "--help"], { cwd: parent }).stdout, /--config <path>.*or its directory/);
  } finally {
    removeProject(dir);
    rmSync(parent, { recursive: true, force: true });
  }
});

test("deploy --dry-run lists a missing PLATFORM_API_KEY under 'A real deploy would refuse' (text and --json)", () => {
  const dir = makeProject();
  try {
    const r = cli(["deploy", "--dry-run"], { cwd: dir });
    assert.equal(r.code, 0, r.output);
    assert.match(
      r.stdout,
      /A real deploy would refuse: these variables are not set:\n {2}- PLATFORM_API_KEY \(for the control plane/,
    );
    const j = cli(["deploy", "--dry-run", "--json"], { cwd: dir });
    assert.equal(j.code, 0, j.output);
    assert.ok(JSON.parse(j.stdout).missing_env.some((m: string) => m.startsWith("PLATFORM_API_KEY ")), j.stdout);
    const withKey = cli(["deploy", "--dry-run", "--json"], { cwd: dir, env: { PLATFORM_API_KEY: "pk" } });
    assert.deepEqual(JSON.parse(withKey.stdout).missing_env, []);
    const real = cli(["deploy"], { cwd: dir });
    assert.equal(real.code, 1);
    assert.match(real.stderr, /PLATFORM_API_KEY is not set/);
  } finally {
    removeProject(dir);
  }
});

test("deploy: a --platform-url that is not a URL is named as such; the default address is in --help", () => {
  const dir = makeProject();
  try {
    const r = cli(["deploy", "--platform-url", "notaurl"], { cwd: dir, env: { PLATFORM_API_KEY: "pk" } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--platform-url "notaurl" is not an http\(s\) URL/);
    assert.doesNotMatch(r.stderr, /Cannot reach|Invalid URL|platform serve/);
    const env = cli(["deploy"], { cwd: dir, env: { PLATFORM_API_KEY: "pk", AGENTCLI_PLATFORM_URL: "ftp:/x" } });
    assert.equal(env.code, 1, "a bad environment variable is not a usage error: exit 1, not 2");
    assert.match(env.stderr, /AGENTCLI_PLATFORM_URL "ftp:\/x" is not an http\(s\) URL/);
    assert.match(
      cli(["deploy", "--help"], { cwd: dir }).stdout,
      /\$AGENTCLI_PLATFORM_URL, or http:\/\/127\.0\.0\.1:8100 when it is unset/,
    );
  } finally {
    removeProject(dir);
  }
});

test("-v/--version work before or after the command; -h stays the command's help", () => {
  for (
    const args of [["init", "--version"], ["deploy", "-v"], ["-v", "deploy"], [
      "dev",
      "--config",
      "x.toml",
      "--version",
    ], ["platform", "serve", "-v"]]
  ) {
    const dir = mkdtempSync(join(tmpdir(), "agentcli-version-"));
    try {
      const r = cli(args, { cwd: dir });
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.output}`);
      assert.equal(r.stdout.trim(), `agentcli ${pkg.version}`, args.join(" "));
      assert.deepEqual(readdirSync(dir), [], `${args.join(" ")} ran the command`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const h = cli(["deploy", "-h"], { cwd: tmpdir() });
  assert.equal(h.code, 0);
  assert.match(h.stdout, /Usage: agentcli deploy/);
});

test("init's next step 'cd <name>' is quoted for a shell when the name needs it", async () => {
  const { spawnSync } = await import("node:child_process");
  const dir = mkdtempSync(join(tmpdir(), "agentcli-init-quote-"));
  try {
    for (const name of ["My Agent!", "Bob's agent", "plain-name"]) {
      const r = cli(["init", name], { cwd: dir });
      assert.equal(r.code, 0, r.output);
      const cd = r.stdout.split("\n").find((l) => l.trimStart().startsWith("cd "))!.trim();
      if (name === "plain-name") assert.equal(cd, "cd plain-name");
      else assert.notEqual(cd, `cd ${name}`);
      const sh = spawnSync("sh", ["-c", `${cd} && pwd`], { cwd: dir, encoding: "utf8" });
      assert.equal(sh.status, 0, `${cd}: ${sh.stderr}`);
      assert.equal(sh.stdout.trim(), join(dir, name));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("each command's usage line names every option its --help lists", () => {
  for (const cmd of ["init", "dev", "deploy", "serve"]) {
    const r = cli([cmd, "--help"], { cwd: tmpdir() });
    assert.equal(r.code, 0, r.output);
    const usage = /^Usage: (.*)$/m.exec(r.stdout)![1]!;
    const options = [...r.stdout.slice(r.stdout.indexOf("Options:")).matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((
      m,
    ) => m[1]!).filter((o) => o !== "--help");
    assert.ok(options.length > 0, cmd);
    for (const o of options) assert.ok(usage.includes(`[${o}`), `${cmd}: usage "${usage}" leaves out ${o}`);
  }
});

/** One line of error (plus its hint), no stack trace, the given exit code. */
function oneLineError(r: { code: number | null; stderr: string; output: string }, code: number, message: RegExp): void {
  assert.equal(r.code, code, r.output);
  const lines = r.stderr.trim().split("\n");
  const at = lines.findIndex((l) => l.startsWith("error: "));
  assert.ok(at >= 0 && lines.filter((l) => l.startsWith("error: ")).length === 1, r.stderr);
  assert.match(lines[at]!, message);
  assert.ok(lines.slice(at + 1).every((l) => l.startsWith("hint: ") || l.startsWith("  ")), r.stderr);
  assert.doesNotMatch(r.output, /hit a bug|\n\s+at .*:\d+:\d+/, "no stack trace");
}

test("init on names and paths it cannot write: one-line errors, exit 2 (usage) or 1, nothing left behind", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-init-bad-"));
  try {
    writeFileSync(join(dir, "afile"), "x");
    oneLineError(cli(["init", "a".repeat(300)], { cwd: dir }), 2, /folder name is 300 bytes, more than the 255/);
    oneLineError(cli(["init", "afile/sub/deeper"], { cwd: dir }), 1, /"[^"]*afile" is a file, not a folder/);
    oneLineError(cli(["init", "/proc/agentcli-x"], { cwd: dir }), 1, /cannot create "\/proc\/agentcli-x"/);
    oneLineError(cli(["init", "@@@"], { cwd: dir }), 2, /does not make an agent name/);
    assert.deepEqual(readdirSync(dir), ["afile"], "nothing was created");
    const ok = cli(["init", "trailing-dash-"], { cwd: dir });
    assert.equal(ok.code, 0, ok.output);
    assert.match(readFileSync(join(dir, "trailing-dash-", "agent.toml"), "utf8"), /name = "trailing-dash"/);
    assert.equal(
      cli(["deploy", "--dry-run"], { cwd: join(dir, "trailing-dash-") }).code,
      0,
      "the name init wrote is valid",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("dev and deploy on bad --config paths and special files: one-line errors, exit 1, no hang", () => {
  const dir = makeProject();
  try {
    writeFileSync(join(dir, "afile"), "x");
    for (const cmd of [["deploy", "--dry-run"], ["dev", "--port", "0"]]) {
      oneLineError(cli([...cmd, "--config", "afile/agent.toml"], { cwd: dir }), 1, /does not exist/);
      oneLineError(cli([...cmd, "--config", `${"c".repeat(300)}/agent.toml`], { cwd: dir }), 1, /does not exist/);
    }
    writeFileSync(join(dir, ".agentcli"), "a file where deploy writes its bundle folder");
    oneLineError(
      cli(["deploy", "--dry-run"], { cwd: dir }),
      1,
      /Cannot create the folder "[^"]*\.agentcli": a file of that name exists/,
    );
    rmSync(join(dir, ".agentcli"));
    rmSync(join(dir, ".env"));
    execFileSync("mkfifo", [join(dir, ".env")]);
    const r = cli(["deploy", "--dry-run"], { cwd: dir });
    assert.equal(r.code, 1, r.output);
    assert.match(r.stderr, /\.env: is not a regular file/);
    assert.doesNotMatch(r.output, /hit a bug/);
  } finally {
    removeProject(dir);
  }
});

test("SIGTERM always ends the CLI: a command that ignores it is stopped after the grace period, a second signal at once", async () => {
  // A plugin whose config hook never settles: the command cannot finish on its own.
  const dir = makeProject({
    "hang.plugin.mjs":
      'export default { name: "hang", kind: "extension", hooks: { "config:load": () => new Promise(() => setInterval(() => {}, 1000)) } };\n',
  });
  try {
    const run = (env: Record<string, string>) => {
      const child = spawn(process.execPath, [CLI, "deploy", "--dry-run", "--plugin", "hang.plugin.mjs"], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      child.stderr.on("data", (d) => (err += d));
      const exited = new Promise<{ code: number | null; err: string }>((r) =>
        child.on("exit", (code) => r({ code, err }))
      );
      return { child, exited, stderr: () => err };
    };
    const once = run({ AGENTCLI_STOP_GRACE_SECONDS: "1" });
    await until(() => /beta/.test(once.stderr()));
    once.child.kill("SIGTERM");
    const a = await once.exited;
    assert.equal(a.code, 143, a.err);
    assert.match(a.err, /still stopping 1 s after SIGTERM; exiting/);
    const twice = run({});
    await until(() => /beta/.test(twice.stderr()));
    twice.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 200));
    twice.child.kill("SIGTERM");
    assert.equal((await twice.exited).code, 143);
  } finally {
    removeProject(dir);
  }
});

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 50));
}
