/**
 * Plugins the control plane is started with reach its revisions: `agentcli --plugin <file>
 * platform serve` (a relative path, from the server's working folder) with another plugin in
 * `AGENTCLI_PLUGINS`, then a bundle whose `[auth]` provider only the `--plugin` file provides.
 * The revision's `agentcli serve` process loads both files (each records, on import, the
 * deployment it was loaded for) and authenticates with the plugin's hook.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { makeBundle, type PlatformServe, startPlatformServe, until } from "./_harness.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A plugin file that appends `<name> <deployment id or ->` to plugins/loaded.txt when imported. */
const pluginFile = (name: string, plugin: string) =>
  `import { appendFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
appendFileSync(fileURLToPath(new URL("loaded.txt", import.meta.url)), "${name} " + (process.env.AGENTCLI_DEPLOYMENT_ID ?? "-") + "\\n");
export default ${plugin};
`;

const IDENTITY = `{
  name: "header-idp",
  kind: "identity",
  identity: { provider: "header_idp", env: [], frontendEnv: [], signIn: "none", perUser: true, posture: "test: x-test-user names the caller" },
  hooks: {
    "auth:authenticate": ({ request }) => {
      const user = request.headers.get("x-test-user");
      return user ? { identity: user, isAuthenticated: true, displayName: user } : null;
    },
  },
}`;

let work = "";
let server: PlatformServe | undefined;
let base = "";
let key = "";

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), "agentcli-platform-plugins-"));
  mkdirSync(join(work, "plugins"));
  writeFileSync(join(work, "plugins/header-idp.mjs"), pluginFile("header-idp", IDENTITY));
  writeFileSync(join(work, "plugins/marker.mjs"), pluginFile("marker", `{ name: "marker", kind: "extension" }`));
  server = await startPlatformServe({
    global: ["--plugin", "plugins/header-idp.mjs"],
    dataDir: "data",
    cwd: work,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", AGENTCLI_PLUGINS: "plugins/marker.mjs" },
  });
  base = server.url;
  key = server.key ?? assert.fail(`no bootstrap key:\n${server.output()}`);
});

after(async () => {
  await server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

test("the control plane's --plugin and AGENTCLI_PLUGINS files load in its revisions' serve processes", async () => {
  const bundle = await makeBundle({
    agentToml: `[agent]\nname = "plugged"\nmodel = "openai:gpt-5"\n\n[auth]\nprovider = "header_idp"\n`,
    plugins: [join(work, "plugins/header-idp.mjs")],
  });
  const c = await api("POST", "/v2/deployments", { name: "plugged", source: "internal_source" });
  assert.equal(c.status, 201, JSON.stringify(c.body));
  const id: string = c.body.id;
  const u = await api("POST", `/v2/deployments/${id}/upload-url`);
  const put = await fetch(u.body.upload_url, { method: "PUT", body: bundle as Uint8Array<ArrayBuffer> });
  assert.equal(put.status, 200);
  const p = await api("PATCH", `/v2/deployments/${id}`, {
    source_revision_config: { source_tarball_path: u.body.object_path },
    secrets: [{ name: "OPENAI_API_KEY", value: "sk-test" }],
  });
  const rev = await until(
    async () => {
      const r = await api("GET", `/v2/deployments/${id}/revisions/${p.body.latest_revision_id}`);
      return ["DEPLOYED", "DEPLOY_FAILED", "BUILD_FAILED", "INTERRUPTED"].includes(r.body.status) ? r.body : null;
    },
    "the revision to end",
    1800,
  );
  const deployLogs = async () =>
    (await api("GET", `/v2/deployments/${id}/revisions/${rev.id}/logs`)).body.logs.map((l: { message: string }) =>
      l.message
    ).join("\n");
  assert.equal(rev.status, "DEPLOYED", `${rev.status_message}\n${await deployLogs()}`);

  const loaded = readFileSync(join(work, "plugins/loaded.txt"), "utf8").split("\n");
  assert.ok(
    loaded.includes(`header-idp ${id}`),
    `the --plugin file loaded in the revision process:\n${loaded.join("\n")}`,
  );
  assert.ok(
    loaded.includes(`marker ${id}`),
    `the AGENTCLI_PLUGINS file loaded in the revision process:\n${loaded.join("\n")}`,
  );

  const url: string = (await api("GET", `/v2/deployments/${id}`)).body.url;
  const search = (headers: Record<string, string>) =>
    fetch(`${url}/assistants/search`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: "{}",
    });
  const allowed = await search({ "x-test-user": "alice" });
  assert.equal(allowed.status, 200, "the plugin's auth hook accepts its header");
  assert.ok(((await allowed.json()) as unknown[]).length >= 1);
  const refused = await search({});
  assert.equal(refused.status, 401, "and refuses a request without it");
  await refused.body?.cancel();
});

test("a --plugin file that does not exist stops platform serve at once with a clear error", async () => {
  const child = spawn(process.execPath, [
    join(ROOT, "bin/agentcli.js"),
    "--plugin",
    "plugins/missing.mjs",
    "platform",
    "serve",
    "--port",
    "0",
    "--data-dir",
    "data-missing",
  ], {
    cwd: work,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const code = await new Promise((r) => child.on("close", r));
  assert.equal(code, 1);
  assert.match(err, /Cannot load plugin "[^"]*plugins\/missing\.mjs": no such file/);
});
