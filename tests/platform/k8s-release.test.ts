/**
 * Gates on the `k8s` compute (issue 37), against a stand-in Kubernetes API (./_kube-api.ts): a
 * gated revision first runs as a candidate (its own Deployment and Service beside the serving
 * pods, which the deployment's Service does not select); the control plane checks it through the
 * API server's service proxy with the listener's credentials; only a revision that passes is
 * applied to the deployment's own Deployments, and the candidate is removed either way. The
 * stand-in acts as the cluster for the candidate: when its Deployment is created it runs the pod
 * as a real `agentcli serve` (./_k8s-pods.ts), and routes the candidate Service's proxy path to it. Which
 * revision answered is read from the model its agent.toml names.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deployment } from "kubernetes-models/apps/v1";
import { Secret, Service } from "kubernetes-models/v1";
import { renderManifests } from "../../plugins/compute/k8s-manifests.ts";
import { renderCandidate } from "../../plugins/compute/k8s-candidate.ts";
import { RevisionProcess } from "../../plugins/compute/revision-process.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type FakeKube, fakeKubeApi } from "./_kube-api.ts";
import { runPod } from "./_k8s-pods.ts";
import {
  closeK8sTest,
  deployBundle,
  makeBundle,
  revisionSettled,
  startK8sPlatform,
  type TestPlatform,
} from "./_harness.ts";

const NS = "gated";
const COMPONENT = "app.kubernetes.io/component";

describe("the candidate's manifests", () => {
  const input = {
    deployment: { id: "6b1f6a2e-7d5c-4b0e-9a51-1c2d3e4f5a6b", name: "Gated", resource_spec: { min_scale: 3 } },
    revisionId: "rev-2",
    namespace: NS,
    image: "registry.example/agent:2",
    bundle: { url: "http://cp.example/bundle", token: "bdl_x" },
    secrets: [{ name: "OPENAI_API_KEY", value: "sk-new" }],
  };

  test("one pod of the revision behind its own Service, which the deployment's Service does not select", () => {
    const c = renderCandidate(input);
    const models: Record<string, new (d: any) => { validate(): void }> = { Deployment, Secret, Service };
    for (const o of c.own) new models[o.kind]!(o).validate();
    const [secret, deployment, service] = c.own as any[];
    assert.equal(deployment.metadata.name, c.name);
    assert.equal(deployment.spec.replicas, 1);
    assert.equal(deployment.spec.template.metadata.labels[COMPONENT], "candidate");
    assert.equal(deployment.spec.template.metadata.annotations["agentcli.dev/revision-id"], "rev-2");
    const env = Object.fromEntries(deployment.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
    assert.equal(env.AGENTCLI_ROLE, "all", "the checks' runs run in the candidate, not on the serving workers");
    assert.deepEqual(deployment.spec.template.spec.containers[0].envFrom, [{
      secretRef: { name: secret.metadata.name },
    }]);
    assert.deepEqual(secret.stringData, { OPENAI_API_KEY: "sk-new" });
    assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels);
    const stable = renderManifests(input).find((o: any) =>
      o.kind === "Service" && o.spec.selector[COMPONENT] === "api-server"
    );
    const selects = Object.entries((stable as any).spec.selector)
      .every(([k, v]) => deployment.spec.template.metadata.labels[k] === v);
    assert.equal(selects, false, "the deployment's Service never sends traffic to the candidate");
    // The stores and the bundle's Secret are the deployment's own; the serving Deployments are not touched.
    const applied = c.objects.map((o) => `${o.kind}/${o.metadata.name}`);
    assert.ok(!applied.some((n) => n.endsWith("-api") || n.endsWith("-queue")), applied.join(" "));
    assert.ok(applied.some((n) => n.startsWith("StatefulSet/") && n.endsWith("-postgres")));
    assert.ok(applied.some((n) => n.startsWith("Secret/") && n.endsWith("-bundle")));
  });
});

describe("a gated revision on a k8s listener", () => {
  let t: TestPlatform;
  let kube: FakeKube;
  let model: ModelServer;
  let work = "";
  let deploymentId = "";
  const pods = new Map<string, RevisionProcess>();

  /** Runs a candidate Deployment's pod as `agentcli serve` here, as the cluster would. */
  async function runCandidate(path: string, d: any): Promise<void> {
    const p = await runPod(kube, d, { namespace: NS, work });
    pods.set(path, p);
    kube.services.set(`${NS}/${d.metadata.name}:http`, `http://${p.address}`);
  }

  const agentToml = (v: string) =>
    `[agent]\nname = "k8s-gated"\nmodel = "openai:k8s-${v}"\n\n[auth]\nprovider = "anonymous"\n`;

  async function deploy(v: string, release?: unknown): Promise<any> {
    const bundle = await makeBundle({ agentToml: agentToml(v) });
    const rid = await deployBundle(t.platform.app, t.keyA, deploymentId, bundle, {
      secrets: [
        { name: "OPENAI_API_KEY", value: "sk-k8s" },
        { name: "OPENAI_BASE_URL", value: model.openaiBaseUrl },
      ],
      release,
    });
    return await revisionSettled(t.platform.app, t.keyA, deploymentId, rid);
  }

  async function logs(revisionId: string): Promise<string> {
    const r = await t.call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?kind=deploy`);
    return r.body.logs.map((l: { message: string }) => l.message).join("\n");
  }

  const servingRevision = () => {
    const api = [...kube.objects.entries()].find(([k]) => k.includes(`/${NS}/deployments/`) && k.endsWith("-api"));
    return api?.[1].spec.template.metadata.annotations["agentcli.dev/revision-id"];
  };
  const candidates = () => [...kube.objects.keys()].filter((k) => k.includes("candidate"));

  before(async () => {
    model = await startModelServer();
    for (let i = 0; i < 20; i++) {
      for (const v of ["V1", "V2", "V3"]) model.script({ when: (r) => r.model === `k8s-${v}`, text: `served by ${v}` });
    }
    work = await mkdtemp(join(tmpdir(), "agentcli-k8s-gates-"));
    kube = await fakeKubeApi({
      onCreate: async (path, o) => {
        if (o.kind === "Deployment" && o.metadata.name.endsWith("-candidate")) await runCandidate(path, o);
      },
      onDelete: async (path, o) => {
        kube.services.delete(`${NS}/${o.metadata.name}:http`);
        await pods.get(path)?.stop();
        pods.delete(path);
      },
    });
    ({ t, deploymentId } = await startK8sPlatform(kube.url, {
      computeId: "cluster-gates",
      namespace: NS,
      name: "k8s-gated",
    }));
  });

  after(async () => {
    await closeK8sTest({ pods, t, kube, model, work });
  });

  test("a revision whose eval fails on its candidate never reaches the deployment's pods; one that passes does", async () => {
    const v1 = await deploy("V1");
    assert.equal(v1.status, "DEPLOYED", v1.status_message);
    assert.equal(servingRevision(), v1.id);
    assert.deepEqual(candidates(), [], "no gates: no candidate");

    const evalCase = {
      name: "names the first version",
      turns: [{ user: "which revision are you?" }],
      checks: [{ status: "success" }, { text_contains: "served by V1" }],
    };
    const bad = await deploy("V2", { gates: { smoke: true, evals: [evalCase] } });
    assert.equal(bad.status, "DEPLOY_FAILED");
    assert.match(bad.status_message, /gate evals failed: 1 of 1 .*it was "served by V2"/);
    const badLog = await logs(bad.id);
    assert.match(badLog, /as gated\/\S+-candidate to check it before it takes traffic/);
    assert.match(badLog, /gate: \/ok answered 200/);
    assert.match(badLog, /gate: a smoke run through the Agent API succeeded/);
    assert.equal(servingRevision(), v1.id, "the serving pods were never given the failed revision");
    assert.deepEqual(candidates(), [], "the candidate is removed");
    assert.equal(pods.size, 0);
    assert.ok(kube.requests.some((r) => /services\/\S+-candidate:http\/proxy\/ok/.test(r)), "checked through the API");

    const good = await deploy("V3", { gates: { smoke: true } });
    assert.equal(good.status, "DEPLOYED", `${good.status_message}\n${await logs(good.id)}`);
    assert.match(await logs(good.id), /passed its checks; rolling it out/);
    assert.equal(servingRevision(), good.id);
    assert.deepEqual(candidates(), []);
    const servingSecret = [...kube.objects.entries()].find(([k]) => /\/secrets\/[^/]+-secrets$/.test(k))?.[1];
    assert.ok(servingSecret, "the serving pods' Secret is applied");
    assert.ok(
      !("AGENTCLI_GATE_TOKEN" in (servingSecret.stringData ?? {})),
      "the gate credential stays the candidate's",
    );
    assert.equal(model.requests.filter((r) => r.model === "k8s-V2").length, 2, "V2 answered its gates' runs only");
  });
});
