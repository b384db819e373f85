import { builtinPlugins } from "../../plugins/registry.ts";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIntegration, type IntegrationRow } from "../../core/platform/store/tenancy.ts";
import { projectBuilders } from "../../core/cli/platform.ts";
import { startTestPlatform, type TestPlatform, until } from "./_harness.ts";

interface Hosted {
  server: Server;
  url: string;
  seen: Array<{ path: string; auth: string | undefined }>;
}

/** A local server speaking GitHub's `GET /user/repos` (per_page/page) or Gitea's `GET /api/v1/user/repos` (limit/page). */
function repoApi(kind: "github" | "gitea", count: number, cloneUrl: (i: number) => string): Promise<Hosted> {
  const seen: Hosted["seen"] = [];
  const server = createServer((req, res) => {
    const u = new URL(req.url!, "http://x");
    seen.push({ path: u.pathname + u.search, auth: req.headers.authorization });
    const expectedPath = kind === "github" ? "/user/repos" : "/api/v1/user/repos";
    const expectedAuth = kind === "github" ? "Bearer gh-token" : "token gitea-token";
    if (u.pathname !== expectedPath) return res.writeHead(404).end("{}");
    if (req.headers.authorization !== expectedAuth) {
      return res.writeHead(401, { "content-type": "application/json" }).end('{"message":"Bad credentials"}');
    }
    const size = Number(u.searchParams.get(kind === "github" ? "per_page" : "limit") ?? 30);
    const page = Number(u.searchParams.get("page") ?? 1);
    const items = Array.from({ length: count }, (_, i) => ({
      id: 1000 + i,
      name: `repo-${i}`,
      full_name: `acme/repo-${i}`,
      owner: kind === "github" ? { login: "acme" } : { login: "acme", username: "acme" },
      clone_url: cloneUrl(i),
      html_url: `https://host/acme/repo-${i}`,
      default_branch: i === 0 ? "main" : "trunk",
    })).slice((page - 1) * size, page * size);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(items));
  });
  return new Promise((resolve) =>
    server.listen(
      0,
      "127.0.0.1",
      () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen }),
    )
  );
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();
}

let t: TestPlatform;
let github: Hosted;
let gitea: Hosted;
let work: string;
let bare: string;
let ghIntegration: IntegrationRow;
let giteaIntegration: IntegrationRow;

before(async () => {
  work = mkdtempSync(join(tmpdir(), "agentcli-repos-"));
  bare = join(work, "agent.git");
  const src = join(work, "src");
  mkdirSync(src);
  git(work, "init", "-q", "--bare", bare);
  git(src, "init", "-q", "-b", "main");
  writeFileSync(join(src, "agent.toml"), '[agent]\nname = "from-git"\nmodel = "openai:gpt-5"\n');
  writeFileSync(join(src, "AGENTS.md"), "# From git\n");
  git(src, "add", ".");
  git(src, "commit", "-q", "-m", "first");
  git(src, "push", "-q", bare, "main");
  github = await repoApi("github", 150, (i) => (i === 0 ? `file://${bare}` : `https://host/acme/repo-${i}.git`));
  gitea = await repoApi("gitea", 3, (i) => `https://gitea/acme/repo-${i}.git`);
  t = await startTestPlatform({
    builders: projectBuilders({ pluginPaths: [], version: "0.0.0-test", builtinPlugins: async () => builtinPlugins }),
  });
  ghIntegration = await createIntegration(t.platform.sql, {
    tenantId: t.tenantA,
    kind: "repohost",
    apiUrl: github.url,
    token: "gh-token",
  });
  giteaIntegration = await createIntegration(t.platform.sql, {
    tenantId: t.tenantA,
    kind: "forge",
    apiUrl: gitea.url,
    token: "gitea-token",
  });
});
after(async () => {
  await t?.close();
  github?.server.close();
  gitea?.server.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("repository listings", () => {
  test("repohost: every page of GitHub-style /user/repos, as listing items", async () => {
    const r = await t.call("GET", `/v1/integrations/repohost/${ghIntegration.id}/repos`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.length, 150);
    assert.deepEqual(r.body[0], {
      host_integration_id: ghIntegration.id,
      id: 1000,
      name: "repo-0",
      owner: "acme",
      url: `file://${bare}`,
      default_branch: "main",
    });
    assert.ok(github.seen.some((s) => s.path.includes("page=2")));
    assert.ok(github.seen.every((s) => s.auth === "Bearer gh-token"));
  });

  test("forge: Gitea/Forgejo-style /api/v1/user/repos with a token header", async () => {
    const r = await t.call("GET", `/v1/integrations/forge/repohost/${giteaIntegration.id}/repos`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.map((x: { name: string }) => x.name), ["repo-0", "repo-1", "repo-2"]);
    assert.equal(r.body[1].default_branch, "trunk");
    assert.equal(r.body[1].host_integration_id, giteaIntegration.id);
  });

  test("wrong kind, other tenant, unknown id: 404; a refused token: 502 naming the integration", async () => {
    assert.equal((await t.call("GET", `/v1/integrations/forge/repohost/${ghIntegration.id}/repos`)).status, 404);
    assert.equal(
      (await t.call("GET", `/v1/integrations/repohost/${ghIntegration.id}/repos`, { key: t.keyB })).status,
      404,
    );
    assert.equal(
      (await t.call("GET", `/v1/integrations/repohost/3f1e9d3c-1111-4222-8333-444455556666/repos`)).status,
      404,
    );
    const bad = await createIntegration(t.platform.sql, {
      tenantId: t.tenantA,
      kind: "repohost",
      apiUrl: github.url,
      token: "wrong",
    });
    const r = await t.call("GET", `/v1/integrations/repohost/${bad.id}/repos`);
    assert.equal(r.status, 502);
    assert.match(r.body.detail, new RegExp(`${bad.id}.*401`));
    assert.ok(!JSON.stringify(r.body).includes("wrong"), "the token is not echoed");
  });
});

describe("repohost revisions", () => {
  test("built from git at repo_ref; a signed push webhook rebuilds", async () => {
    const listing = (await t.call("GET", `/v1/integrations/repohost/${ghIntegration.id}/repos`)).body[0];
    const d = await t.call("POST", "/v2/deployments", {
      body: {
        name: "git-agent",
        source: "repohost",
        source_config: { integration_id: listing.host_integration_id, repo_url: listing.url, build_on_push: true },
        source_revision_config: { repo_ref: listing.default_branch },
      },
    });
    assert.equal(d.status, 201, JSON.stringify(d.body));
    const firstSha = git(bare, "rev-parse", "main");
    const built = await until(async () => {
      const r = await t.call("GET", `/v2/deployments/${d.body.id}/revisions/${d.body.latest_revision_id}`);
      return ["DEPLOYING", "DEPLOYED", "DEPLOY_FAILED", "BUILD_FAILED", "CREATE_FAILED"].includes(r.body.status)
        ? r.body
        : null;
    }, "repohost build");
    assert.notEqual(built.status, "BUILD_FAILED", built.status_message);
    assert.notEqual(built.status, "CREATE_FAILED", built.status_message);
    assert.equal(built.source_revision_config.repo_commit_sha, firstSha);
    const logs = await t.call("GET", `/v2/deployments/${d.body.id}/revisions/${built.id}/logs?kind=build`);
    assert.ok(logs.body.logs.some((l: { message: string }) => l.message.includes(`checked out commit ${firstSha}`)));
    assert.ok(logs.body.logs.some((l: { message: string }) => l.message.includes('bundle "from-git"')));

    const src = join(work, "src");
    writeFileSync(join(src, "AGENTS.md"), "# From git, second\n");
    git(src, "commit", "-q", "-am", "second");
    git(src, "push", "-q", bare, "main");
    const secondSha = git(bare, "rev-parse", "main");
    const payload = JSON.stringify({
      ref: "refs/heads/main",
      after: secondSha,
      repository: { clone_url: listing.url },
    });
    const unsigned = await t.platform.app.request(`/v1/integrations/${ghIntegration.id}/webhook`, {
      method: "POST",
      body: payload,
      headers: { "x-hub-signature-256": "sha256=00" },
    });
    assert.equal(unsigned.status, 401);
    const sig = `sha256=${createHmac("sha256", ghIntegration.webhook_secret).update(payload).digest("hex")}`;
    const hook = await t.platform.app.request(`/v1/integrations/${ghIntegration.id}/webhook`, {
      method: "POST",
      body: payload,
      headers: { "x-hub-signature-256": sig },
    });
    assert.equal(hook.status, 202);
    const { revisions } = (await hook.json()) as { revisions: string[] };
    assert.equal(revisions.length, 1);
    const rebuilt = await until(async () => {
      const r = await t.call("GET", `/v2/deployments/${d.body.id}/revisions/${revisions[0]}`);
      return r.body.source_revision_config.repo_commit_sha &&
          ["DEPLOYING", "DEPLOYED", "DEPLOY_FAILED", "BUILD_FAILED"].includes(r.body.status)
        ? r.body
        : null;
    }, "rebuild");
    assert.equal(rebuilt.source_revision_config.repo_commit_sha, secondSha);
    const otherBranch = JSON.stringify({ ref: "refs/heads/feature", repository: { clone_url: listing.url } });
    const sig2 = `sha256=${createHmac("sha256", ghIntegration.webhook_secret).update(otherBranch).digest("hex")}`;
    const ignored = await t.platform.app.request(`/v1/integrations/${ghIntegration.id}/webhook`, {
      method: "POST",
      body: otherBranch,
      headers: { "x-hub-signature-256": sig2 },
    });
    assert.deepEqual(((await ignored.json()) as { revisions: string[] }).revisions, []);
  });

  test("a ref that does not exist ends CREATE_FAILED with the reason", async () => {
    const d = await t.call("POST", "/v2/deployments", {
      body: {
        name: "git-missing-ref",
        source: "repohost",
        source_config: { integration_id: ghIntegration.id, repo_url: `file://${bare}` },
        source_revision_config: { repo_ref: "no-such-branch" },
      },
    });
    const r = await until(async () => {
      const x = await t.call("GET", `/v2/deployments/${d.body.id}/revisions/${d.body.latest_revision_id}`);
      return x.body.status === "CREATE_FAILED" ? x.body : null;
    }, "CREATE_FAILED");
    assert.match(r.status_message, /no-such-branch/);
  });
});
