/**
 * Canaries on the `k8s` compute (issue 37), against a stand-in Kubernetes API (./_kube-api.ts)
 * that acts as the cluster: the deployment's API Deployment and the canary's run as real
 * `agentcli serve` pods (./_k8s-pods.ts; each keeps its own data, so a turn sent to the wrong
 * revision finds no thread), and the router Deployment runs as a real `agentcli router` with the
 * command its manifest gives, its Services resolved to those pods and its threads kept in
 * PostgreSQL. Clients (the LangGraph SDK) reach the deployment where its Service points: the
 * router during the canary, the API pod otherwise. Which revision answered is read from the
 * model its agent.toml names.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { Deployment } from "kubernetes-models/apps/v1";
import { Secret, Service } from "kubernetes-models/v1";
import { selfInvocation } from "../../core/kernel/index.ts";
import { renderCanary } from "../../plugins/compute/k8s-canary.ts";
import type { RevisionProcess } from "../../plugins/compute/revision-process.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type FakeKube, fakeKubeApi } from "./_kube-api.ts";
import { runPod } from "./_k8s-pods.ts";
import {
  closeK8sTest,
  deployBundle,
  makeBundle,
  modelSecrets,
  revisionSettled,
  startK8sPlatform,
  type TestPlatform,
} from "./_harness.ts";
import { SERVING, type Serving, spawnServing } from "../_spawn-serving.ts";

const NS = "canaries";
const COMPONENT = "app.kubernetes.io/component";
const DATABASE_URL = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

describe("the canary's manifests", () => {
  const input = {
    deployment: { id: "7c2a0b3e-1d5c-4b0e-9a51-1c2d3e4f5a6b", name: "Canaried" },
    revisionId: "rev-2",
    namespace: NS,
    image: "registry.example/agent:2",
    bundle: { url: "http://cp.example/bundle", token: "bdl_x" },
    secrets: [{ name: "OPENAI_API_KEY", value: "sk-new" }],
  };

  test("the canary and the router beside the serving pods; the deployment's Service selects the router", () => {
    const c = renderCanary(input, { percent: 30, routerImage: "ghcr.io/agentcli/agentcli:1" });
    const models: Record<string, new (d: any) => { validate(): void }> = { Deployment, Secret, Service };
    for (const o of [...c.own, c.front, c.service]) new models[o.kind]!(o).validate();
    const byName = new Map(c.own.map((o: any) => [`${o.kind}/${o.metadata.name}`, o]));
    const canary = byName.get(`Deployment/${c.name}`) as any;
    assert.equal(canary.spec.template.metadata.annotations["agentcli.dev/revision-id"], "rev-2");
    assert.deepEqual((byName.get(`Service/${c.name}`) as any).spec.selector, canary.spec.selector.matchLabels);
    const router = byName.get(`Deployment/${c.router}`) as any;
    const container = router.spec.template.spec.containers[0];
    assert.equal(container.image, "ghcr.io/agentcli/agentcli:1");
    const app = c.service.metadata.name;
    assert.deepEqual(container.command, [
      "agentcli",
      "router",
      "--serving",
      `http://${app}-serving`,
      "--canary",
      `http://${c.name}`,
      "--percent",
      "30",
      "--deployment",
      input.deployment.id,
      "--revision",
      "rev-2",
      "--port",
      "8000",
    ]);
    assert.deepEqual(container.env.map((e: any) => e.name), ["POSTGRES_PASSWORD", "DATABASE_URL"]);
    assert.ok(!JSON.stringify(router).includes("sk-new"), "the router holds none of the revision's secrets");
    assert.equal((byName.get(`Service/${app}-serving`) as any).spec.selector[COMPONENT], "api-server");
    assert.equal((c.front as any).spec.selector[COMPONENT], "router");
    assert.equal((c.service as any).spec.selector[COMPONENT], "api-server");
    assert.equal(c.front.metadata.name, app);
  });
});

describe("a canary on a k8s listener", () => {
  let t: TestPlatform;
  let kube: FakeKube;
  let model: ModelServer;
  let work = "";
  let deploymentId = "";
  /** Pods by their Deployment's API path; the router's process and address. */
  const pods = new Map<string, RevisionProcess>();
  let router: { serving: Serving; url: string; command: string[] } | null = null;
  /** The router now: read through a call, as deploy() starts and stops it behind the test's back. */
  const routerNow = () => router;
  let app = "";

  const deploymentPath = (name: string) => `/apis/apps/v1/namespaces/${NS}/deployments/${name}`;
  const address = (name: string) => {
    const p = pods.get(deploymentPath(name));
    return p ? `http://${p.address}` : null;
  };

  /** Runs the router Deployment's command as `agentcli router`, its Services resolved to the pods. */
  async function startRouter(command: string[]): Promise<void> {
    const [cmd, ...pre] = selfInvocation();
    const s = await spawnServing({
      serving: SERVING.router,
      start: (port) => {
        const args = command.slice(1).map((a) =>
          a === `http://${app}-serving`
            ? address(`${app}-api`)!
            : a === `http://${app}-canary`
            ? address(`${app}-canary`)!
            : a
        );
        args[args.indexOf("--port") + 1] = String(port);
        return spawn(cmd!, [...pre, ...args, "--host", "127.0.0.1"], {
          env: { PATH: process.env.PATH ?? "", DATABASE_URL },
          stdio: ["ignore", "pipe", "pipe"],
        });
      },
    });
    router = { serving: s, url: s.url, command };
  }

  async function stopRouter(): Promise<void> {
    const r = router;
    router = null;
    await r?.serving.stop();
  }

  /** Where the deployment's Service sends clients: the router or the API pod, by its selector. */
  function front(): string {
    const service = kube.objects.get(`/api/v1/namespaces/${NS}/services/${app}`);
    return service.spec.selector[COMPONENT] === "router" ? router!.url : address(`${app}-api`)!;
  }

  const agentToml = (v: string) =>
    `[agent]\nname = "k8s-canary"\nmodel = "openai:k8c-${v}"\n\n[auth]\nprovider = "anonymous"\n`;

  async function deploy(v: string, release?: unknown): Promise<any> {
    const bundle = await makeBundle({ agentToml: agentToml(v) });
    const rid = await deployBundle(t.platform.app, t.keyA, deploymentId, bundle, {
      secrets: modelSecrets("sk-k8s", model.openaiBaseUrl),
      release,
    });
    return await revisionSettled(t.platform.app, t.keyA, deploymentId, rid, { canary: true });
  }

  /** One turn on a thread where the deployment's Service points; the version that answered. */
  async function turn(threadId: string): Promise<string> {
    const client = new Client({ apiUrl: front() });
    const out = await client.runs.wait(threadId, "agent", {
      input: { messages: [{ role: "user", content: "which revision are you?" }] },
    }) as { messages?: Array<{ content: unknown }> };
    const last = out.messages?.at(-1)?.content;
    return /served by (V\d)/.exec(String(last))?.[1] ?? `unknown: ${JSON.stringify(out).slice(0, 200)}`;
  }

  const newThread = async () => (await new Client({ apiUrl: front() }).threads.create()).thread_id;
  const canaryObjects = () =>
    [...kube.objects.keys()].filter((k) => /-(canary|router|serving)(-secrets)?$/.test(k)).sort();

  before(async () => {
    model = await startModelServer();
    for (let i = 0; i < 80; i++) {
      for (const v of ["V1", "V2", "V3"]) model.script({ when: (r) => r.model === `k8c-${v}`, text: `served by ${v}` });
    }
    work = await mkdtemp(join(tmpdir(), "agentcli-k8s-canary-"));
    const start = async (path: string, o: any) => {
      const name: string = o.metadata.name;
      if (name.endsWith("-router")) return await startRouter(o.spec.template.spec.containers[0].command);
      if (!name.endsWith("-api") && !name.endsWith("-canary")) return;
      // Each pod runs its own runs (the stand-in runs no queue workers).
      pods.set(path, await runPod(kube, o, { namespace: NS, work, env: { AGENTCLI_ROLE: "all" } }));
    };
    kube = await fakeKubeApi({
      onCreate: async (path, o) => {
        if (o.kind === "Deployment") await start(path, o);
      },
      onPatch: async (path, before, after) => {
        const revision = (o: any) => o.spec?.template?.metadata?.annotations?.["agentcli.dev/revision-id"];
        if (after.kind !== "Deployment" || revision(before) === revision(after) || !pods.has(path)) return;
        // A rolled Deployment: its pod is replaced by one of the new template.
        await pods.get(path)!.stop();
        pods.delete(path);
        await start(path, after);
      },
      onDelete: async (path, o) => {
        if (o.kind === "Deployment" && o.metadata.name.endsWith("-router")) return await stopRouter();
        await pods.get(path)?.stop();
        pods.delete(path);
      },
    });
    ({ t, deploymentId } = await startK8sPlatform(kube.url, {
      computeId: "cluster-canary",
      namespace: NS,
      name: "k8s-canary",
    }));
  });

  after(async () => {
    await stopRouter();
    await closeK8sTest({ pods, t, kube, model, work });
  });

  test("a canary at 50% takes half the new threads through the router, each thread's turns stay on its revision; promote and abort flip the Service", async () => {
    const v1 = await deploy("V1");
    assert.equal(v1.status, "DEPLOYED", v1.status_message);
    app = [...kube.objects.values()].find((o) => o.kind === "Service" && o.spec.selector[COMPONENT] === "api-server")
      .metadata.name;
    const before = await newThread();
    assert.equal(await turn(before), "V1");

    const v2 = await deploy("V2", { canary_percent: 50 });
    assert.equal(v2.status_message, "canary: 50% of new threads; promote or abort it");
    assert.ok(router, "the router runs");
    assert.equal(front(), router!.url, "the deployment's Service selects the router");
    const threads: string[] = [];
    for (let i = 0; i < 10; i++) threads.push(await newThread());
    const servedBy = new Map<string, string>();
    for (const th of threads) servedBy.set(th, await turn(th));
    const count = (v: string) => [...servedBy.values()].filter((x) => x === v).length;
    assert.deepEqual([count("V1"), count("V2")], [5, 5], JSON.stringify([...servedBy.values()]));
    // A restarted router finds each thread's revision in the deployment's database.
    const command = router!.command;
    await stopRouter();
    await startRouter(command);
    const moved: string[] = [];
    for (const th of [...threads, before]) {
      const again = await turn(th);
      if (again !== (servedBy.get(th) ?? "V1")) moved.push(`${th}: ${servedBy.get(th)} then ${again}`);
    }
    assert.deepEqual(moved, [], "no turn of a thread reached the other revision");
    const next = [await newThread(), await newThread()];
    assert.deepEqual(
      (await Promise.all(next.map(turn))).sort(),
      ["V1", "V2"],
      "the share goes on exactly after a restart",
    );

    const promoted = await t.call("POST", `/v2/deployments/${deploymentId}/canary/promote`);
    assert.equal(promoted.status, 200, JSON.stringify(promoted.body));
    const api = kube.objects.get(deploymentPath(`${app}-api`));
    assert.equal(api.spec.template.metadata.annotations["agentcli.dev/revision-id"], v2.id);
    assert.equal(front(), address(`${app}-api`), "the Service selects the API pods again");
    assert.deepEqual(canaryObjects(), [], "the canary and the router are removed");
    assert.equal(router, null);
    assert.equal(await turn(await newThread()), "V2");
    const done = (await t.call("GET", `/v2/deployments/${deploymentId}/revisions/${v2.id}`)).body;
    assert.equal(done.status, "DEPLOYED");

    const v3 = await deploy("V3", { canary_percent: 50 });
    assert.match(v3.status_message, /^canary: 50%/);
    assert.equal(front(), routerNow()!.url);
    const [a, b] = [await newThread(), await newThread()];
    assert.deepEqual([await turn(a), await turn(b)].sort(), ["V2", "V3"]);
    const aborted = await t.call("POST", `/v2/deployments/${deploymentId}/canary/abort`);
    assert.equal(aborted.status, 200, JSON.stringify(aborted.body));
    assert.equal(front(), address(`${app}-api`), "abort points the Service back at the API pods");
    assert.deepEqual(canaryObjects(), []);
    assert.equal(
      kube.objects.get(deploymentPath(`${app}-api`)).spec.template.metadata.annotations["agentcli.dev/revision-id"],
      v2.id,
      "the serving revision stays",
    );
    assert.equal(await turn(await newThread()), "V2");
  });
});
