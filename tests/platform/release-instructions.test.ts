/**
 * Revisions sharing a database each serve their own bundle's instructions, and gates reach an
 * identity-provider agent (issue 37), end to end on the local listener of a PostgreSQL control
 * plane with real `agentcli serve` revision processes and the scripted model server (which
 * records the system prompt of every request it gets, and the model it named: each version's
 * agent.toml names its own, each AGENTS.md carries its own marker):
 * - a gated revision with a changed AGENTS.md that fails its gate leaves the serving revision's
 *   instructions unchanged;
 * - a canary's threads get the canary's AGENTS.md, the serving revision's threads its own;
 * - a rollback serves the old instructions again;
 * - an `identity_a` agent passes its smoke and eval gates with the revision's own gate
 *   credential, while the stable URL still refuses requests without a user's token, or with a
 *   forged gate credential.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import {
  deployBundle,
  makeBundle,
  modelSecrets,
  revisionSettled,
  stableJson,
  startTestPlatform,
  type TestPlatform,
} from "./_harness.ts";

let tp: TestPlatform;
let model: ModelServer;

const ANONYMOUS = `[auth]\nprovider = "anonymous"\n`;
const IDENTITY_A = `[auth]\nprovider = "identity_a"\n`;
const marker = (v: string) => `MARKER-INSTRUCTIONS-${v}`;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return await tp.call(method, path, body === undefined ? {} : { body });
}

/** A deployment, and `deploy(version, release)`: a bundle whose model and AGENTS.md name the version, as a new revision. */
async function deployment(name: string, auth: string, secrets: Array<{ name: string; value: string }> = []) {
  const created = await call("POST", "/v2/deployments", { name, source: "internal_source" });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id: string = created.body.id;
  const deploy = async (version: string, release?: unknown): Promise<string> => {
    const bundle = await makeBundle({
      agentToml: `[agent]\nname = "${name}"\nmodel = "openai:instr-${version}"\n\n${auth}`,
      agentsMd: `# Agent ${version}\nYou are version ${version}. ${marker(version)}\n`,
    });
    return await deployBundle(tp.platform.app, tp.keyA, id, bundle, {
      secrets: [...modelSecrets("sk-instructions", model.openaiBaseUrl), ...secrets],
      release,
    });
  };
  const settled = (revisionId: string) =>
    revisionSettled(tp.platform.app, tp.keyA, id, revisionId, { canary: true, attempts: 3000 });
  const logs = async (revisionId: string) => {
    const r = await call("GET", `/v2/deployments/${id}/revisions/${revisionId}/logs?kind=deploy`);
    return r.body.logs.map((l: { message: string }) => l.message).join("\n");
  };
  const url = async () => (await call("GET", `/v2/deployments/${id}`)).body.url as string;
  return { id, deploy, settled, logs, url };
}

/** Every model request is answered with the version its model names; `count` answers per version. */
function answerByVersion(count: number): void {
  for (let i = 0; i < count; i++) {
    for (const v of ["V1", "V2", "V3", "IDP"]) {
      model.script({ when: (r) => r.model === `instr-${v}`, text: `served by ${v}` });
    }
  }
}

/** The model requests since `from` as [version, system prompt]. */
function requestsSince(from: number): Array<{ version: string; system: string }> {
  return model.requests.slice(from).map((r) => ({ version: String(r.model).replace("instr-", ""), system: r.system }));
}

/** One turn on a new or given thread through the stable URL; the version that answered. */
async function turn(url: string, threadId?: string): Promise<{ threadId: string; version: string }> {
  const id = threadId ?? (await stableJson(url, "/threads", {})).thread_id;
  const out = await stableJson(url, `/threads/${id}/runs/wait`, {
    assistant_id: "agent",
    input: { messages: [{ role: "user", content: "who are you?" }] },
  });
  const version = /served by (\w+)/.exec(String(out.messages?.at(-1)?.content))?.[1] ?? "unknown";
  return { threadId: id, version };
}

/** Each request's system prompt carries its own version's marker and no other version's. */
function assertOwnInstructions(requests: Array<{ version: string; system: string }>): void {
  for (const r of requests) {
    assert.ok(r.system.includes(marker(r.version)), `${r.version}'s request has its own AGENTS.md: ${r.system}`);
    for (const other of ["V1", "V2", "V3"].filter((v) => v !== r.version)) {
      assert.ok(!r.system.includes(marker(other)), `${r.version}'s request has no ${other} instructions`);
    }
  }
}

before(async () => {
  model = await startModelServer();
  // PostgreSQL: the revisions of a deployment run side by side on its schema.
  tp = await startTestPlatform({ postgres: true });
});

after(async () => {
  await tp?.close();
  await model?.close();
});

test("a failed gate, a canary and a rollback: each revision answers with its own AGENTS.md", async () => {
  const d = await deployment("instructions-e2e", ANONYMOUS);
  const v1 = await d.deploy("V1");
  assert.equal((await d.settled(v1)).status, "DEPLOYED", await d.logs(v1));
  const url = await d.url();
  answerByVersion(40);
  const first = await turn(url);
  assert.equal(first.version, "V1");

  // A gated V2 with a changed AGENTS.md fails its eval gate: V1's instructions are untouched.
  let from = model.requests.length;
  const gated = await d.deploy("V2", {
    gates: {
      smoke: true,
      evals: [{ name: "stays V1", turns: [{ user: "who are you?" }], checks: [{ text_contains: "served by V1" }] }],
    },
  });
  const failed = await d.settled(gated);
  assert.equal(failed.status, "DEPLOY_FAILED", await d.logs(gated));
  const again = await turn(url, first.threadId);
  const fresh = await turn(url);
  assert.deepEqual([again.version, fresh.version], ["V1", "V1"]);
  const gateAndAfter = requestsSince(from);
  assert.ok(gateAndAfter.some((r) => r.version === "V2"), "the gates ran on V2 with V2's instructions");
  assertOwnInstructions(gateAndAfter);

  // A canary V3 at 50%: its threads get V3's AGENTS.md, the others V1's, side by side.
  from = model.requests.length;
  const canary = await d.deploy("V3", { canary_percent: 50 });
  assert.equal((await d.settled(canary)).status, "DEPLOYING", await d.logs(canary));
  const served: string[] = [];
  for (let i = 0; i < 6; i++) {
    const t = await turn(url);
    served.push(t.version, (await turn(url, t.threadId)).version);
  }
  assert.deepEqual([...new Set(served)].sort(), ["V1", "V3"], "both revisions served threads");
  assert.equal((await turn(url, first.threadId)).version, "V1");
  assertOwnInstructions(requestsSince(from));

  // Promote V3, then roll back to V1: the old instructions are served again.
  assert.equal((await call("POST", `/v2/deployments/${d.id}/canary/promote`)).status, 200);
  from = model.requests.length;
  assert.equal((await turn(url)).version, "V3");
  const rolled = await call("POST", `/v2/deployments/${d.id}/rollback`, { revision_id: v1 });
  assert.equal(rolled.status, 201, JSON.stringify(rolled.body));
  assert.equal((await d.settled(rolled.body.id)).status, "DEPLOYED", await d.logs(rolled.body.id));
  assert.equal((await turn(url)).version, "V1");
  assert.equal((await turn(url, first.threadId)).version, "V1");
  const last = requestsSince(from);
  assert.deepEqual(last.map((r) => r.version), ["V3", "V1", "V1"]);
  assertOwnInstructions(last);
});

test("an identity_a agent passes its smoke and eval gates with its own gate credential; the stable URL still refuses others", async () => {
  const d = await deployment("gated-identity", IDENTITY_A, [
    // No identity server is needed: the gates never sign a user in, and no one else gets through.
    { name: "IDENTITY_A_URL", value: "http://127.0.0.1:9" },
    { name: "IDENTITY_A_PUBLISHABLE_DEFAULT_KEY", value: "pk-test" },
  ]);
  answerByVersion(4);
  const revision = await d.deploy("IDP", {
    gates: {
      smoke: true,
      evals: [{
        name: "answers as alice",
        user: "alice",
        turns: [{ user: "who are you?" }],
        checks: [{ status: "success" }, { text_contains: "served by IDP" }],
      }],
    },
  });
  const done = await d.settled(revision);
  const log = await d.logs(revision);
  assert.equal(done.status, "DEPLOYED", log);
  assert.match(log, /gate: a smoke run through the Agent API succeeded/);
  assert.match(log, /gate: all 1 eval cases passed/);
  assert.doesNotMatch(log, /AGENTCLI_GATE_TOKEN=/);

  const url = await d.url();
  const refusals = await Promise.all([
    fetch(`${url}/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
    fetch(`${url}/threads`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-agentcli-gate": "a-forged-credential-of-forty-characters" },
      body: "{}",
    }),
    fetch(`${url}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-agentcli-gate": "" },
      body: "{}",
    }),
  ]);
  assert.deepEqual(refusals.map((r) => r.status), [401, 401, 401]);
  await Promise.all(refusals.map((r) => r.body?.cancel()));
});
