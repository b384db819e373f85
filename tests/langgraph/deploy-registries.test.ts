/**
 * `agentcli deploy` of a LangGraph.js project whose graph imports a package of a private scoped
 * registry (`@acme/greet`, from a registry answering 401 without the token): its `.npmrc` names
 * the registry and `${NPM_TOKEN}`, its `.env` (langgraph.json's `env`) holds the token, which
 * `deploy` sends as a secret of the deployment. The control plane's build installs the package
 * with `npm ci` through the project's `.npmrc` and the graph runs with it; the token is in no
 * line of `deploy`'s output, the build log or the revision.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type DeployPlatform, startDeployPlatform } from "./_deploy.ts";
import { ROOT } from "./_dev.ts";
import { type NpmRegistry, startNpmRegistry } from "../platform/_npm-registry.ts";

const FIXTURE = join(ROOT, "tests/langgraph/fixtures/deploy-packages");
const TOKEN = `acme${randomUUID().replaceAll("-", "")}`;
let cp: DeployPlatform;
let registry: NpmRegistry;

before(async () => {
  registry = await startNpmRegistry({ token: TOKEN });
  cp = await startDeployPlatform();
});
after(async () => {
  await cp?.close();
  await registry?.close();
});

describe("a dependency from a private scoped registry, deployed with agentcli deploy", () => {
  test("the build installs it through the project's .npmrc, the token a secret from .env, shown nowhere", async () => {
    const greet = registry.publish("@acme/greet", "1.0.0", { "index.js": 'module.exports = "hello from acme";\n' });
    const dir = cp.project(FIXTURE, (d) => {
      const pkg = JSON.parse(readFileSync(join(d, "package.json"), "utf8"));
      pkg.name = "deploy-registry-example";
      pkg.dependencies["@acme/greet"] = "1.0.0";
      writeFileSync(join(d, "package.json"), JSON.stringify(pkg, null, 2));
      const lock = JSON.parse(readFileSync(join(d, "package-lock.json"), "utf8"));
      lock.name = pkg.name;
      lock.packages[""].name = pkg.name;
      lock.packages[""].dependencies["@acme/greet"] = "1.0.0";
      lock.packages["node_modules/@acme/greet"] = {
        version: "1.0.0",
        resolved: greet.tarball,
        integrity: greet.integrity,
        license: "MIT",
      };
      writeFileSync(join(d, "package-lock.json"), JSON.stringify(lock, null, 2));
      const lg = JSON.parse(readFileSync(join(d, "langgraph.json"), "utf8"));
      lg.env = ".env";
      lg.graphs.greet = "./src/greet.ts:graph";
      writeFileSync(join(d, "langgraph.json"), JSON.stringify(lg, null, 2));
      writeFileSync(join(d, ".env"), `NPM_TOKEN=${TOKEN}\n`);
      const host = registry.url.replace(/^http:/, "");
      writeFileSync(join(d, ".npmrc"), `@acme:registry=${registry.url}/\n${host}/:_authToken=\${NPM_TOKEN}\n`);
      writeFileSync(
        join(d, "src/greet.ts"),
        [
          'import { Annotation, START, StateGraph } from "@langchain/langgraph";',
          'import greeting from "@acme/greet";',
          "const State = Annotation.Root({ greeting: Annotation<string> });",
          "export const graph = new StateGraph(State)",
          '  .addNode("greet", () => ({ greeting }))',
          '  .addEdge(START, "greet")',
          "  .compile();",
          "",
        ].join("\n"),
      );
    });
    const out = await cp.agentcli(dir, ["deploy", "--platform-url", cp.base, "--yes"]);
    assert.equal(out.code, 0, out.output + cp.output());
    const url = out.output.match(/URL: (\S+)/)![1]!;
    const client = new Client({ apiUrl: url, apiKey: cp.key, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    const result = await client.runs.wait(thread.thread_id, "greet", { input: {} }) as { greeting: string };
    assert.equal(result.greeting, "hello from acme");
    assert.ok(registry.requests.some((r) => r.path.endsWith(".tgz") && r.authorized));
    const all = (await cp.api("GET", "/v2/deployments")).resources as Array<{ id: string; name: string }>;
    const d = all.find((x) => x.name === "deploy-registry-example")!;
    const revision = (await cp.api("GET", `/v2/deployments/${d.id}`)).active_revision_id;
    const logs = await cp.api("GET", `/v2/deployments/${d.id}/revisions/${revision}/logs?kind=build`);
    const log = (logs.logs as Array<{ message: string }>).map((l) => l.message).join("\n");
    assert.match(log, /the project has \.npmrc: its registry settings are used/);
    assert.match(log, /npm ci \(package-lock\.json\)/);
    for (const text of [out.output, log, cp.output()]) assert.ok(!text.includes(TOKEN), text);
  });
});
