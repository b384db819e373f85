import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { Secret, Service } from "kubernetes-models/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import type { K8sObject } from "../../core/kernel/index.ts";
import { renderManifests } from "../../plugins/compute/k8s-manifests.ts";
import { KubeClient } from "../../core/platform/compute/k8s-client.ts";
import { ResourceSpec } from "../../core/platform/api/schema.ts";
import { setListenerKubeconfig } from "../../core/platform/store/tenancy.ts";
import { fakeKubeApi, kubeconfig } from "./_kube-api.ts";
import { makeBundle, startTestPlatform, type TestPlatform, until } from "./_harness.ts";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const FULL_SPEC = {
  min_scale: 2,
  max_scale: 6,
  cpu: 0.5,
  cpu_limit: 1,
  memory_mb: 512,
  memory_limit_mb: 1024,
  queue_min_scale: 1,
  queue_max_scale: 4,
  queue_cpu: 0.25,
  queue_cpu_limit: 0.5,
  queue_memory_mb: 256,
  queue_memory_limit_mb: 512,
  orchestrator_cpu: 0.1,
  orchestrator_cpu_limit: 0.2,
  orchestrator_memory_mb: 64,
  orchestrator_memory_limit_mb: 128,
  orchestrator_min_scale: 1,
  orchestrator_max_scale: 2,
  executor_cpu: 0.1,
  executor_cpu_limit: 0.2,
  executor_memory_mb: 64,
  executor_memory_limit_mb: 128,
  redis_cpu: 0.1,
  redis_cpu_limit: 0.5,
  redis_memory_mb: 128,
  redis_memory_limit_mb: 256,
  db_cpu: 0.5,
  db_cpu_limit: 2,
  db_memory_mb: 1024,
  db_memory_limit_mb: 2048,
  db_storage_gi: 20,
  db_max_connections: 200,
  labels: { team: "agents" },
  annotations: { "example.com/owner": "agents" },
  service_account_name: "agent-runner",
  image_pull_secrets: [{ name: "regcred" }],
  volumes: [{ name: "cfg", configMap: { name: "agent-config" } }, { name: "scratch", emptyDir: {} }, {
    name: "creds",
    secret: { secretName: "creds" },
  }],
  volume_mounts: [{ name: "cfg", mountPath: "/etc/agent", readOnly: true }, {
    name: "scratch",
    mountPath: "/scratch",
    subPath: "x",
  }],
  init_containers: [{
    name: "migrate",
    image: "busybox:1.36",
    command: ["sh", "-c"],
    args: ["echo ok"],
    env: [{ name: "A", value: "1" }],
    volumeMounts: [{ name: "scratch", mountPath: "/scratch" }],
  }],
  sidecars: [{
    name: "proxy",
    image: "envoyproxy/envoy:v1.30",
    imagePullPolicy: "IfNotPresent",
    workingDir: "/",
    env: [{ name: "B", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
    envFrom: [{ configMapRef: { name: "agent-config" } }],
    resources: { limits: { cpu: "200m" }, requests: { cpu: "100m" } },
    volumeMounts: [{ name: "creds", mountPath: "/creds" }],
    securityContext: { runAsNonRoot: true },
  }],
};

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
};

function render(spec: unknown, extra: Partial<Parameters<typeof renderManifests>[0]> = {}): K8sObject[] {
  return renderManifests({
    deployment: {
      id: "6b1f6a2e-7d5c-4b0e-9a51-1c2d3e4f5a6b",
      name: "My Agent",
      resource_spec: ResourceSpec.parse(spec),
    },
    revisionId: "rev-1",
    namespace: "agents",
    image: "registry.example/agent:1",
    bundle: { url: "http://cp.example/v2/deployments/d/revisions/r/bundle", token: "bdl_secret-token" },
    secrets: [{ name: "OPENAI_API_KEY", value: "sk-x" }],
    secretReferences: [{ name: "DB_PASS", secret_name: "db", secret_key: "password" }],
    ...extra,
  });
}

describe("manifests", () => {
  test("a full resource_spec renders objects that pass the Kubernetes schemas", () => {
    const objects = render(FULL_SPEC);
    for (const o of objects) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      assert.ok(Model, `no schema for ${o.apiVersion}/${o.kind}`);
      assert.doesNotThrow(() => new Model(o).validate(), `${o.kind} ${o.metadata.name}`);
    }
    const byName = (kind: string, suffix: string) =>
      objects.find((o) => o.kind === kind && o.metadata.name.endsWith(suffix)) as any;
    const api = byName("Deployment", "-api");
    assert.equal(api.spec.replicas, 2);
    const pod = api.spec.template.spec;
    assert.deepEqual(pod.containers[0].resources, {
      requests: { cpu: "500m", memory: "512Mi" },
      limits: { cpu: "1000m", memory: "1024Mi" },
    });
    assert.equal(pod.serviceAccountName, "agent-runner");
    assert.deepEqual(pod.imagePullSecrets, [{ name: "regcred" }]);
    assert.deepEqual(pod.initContainers.map((c: { name: string }) => c.name), ["fetch-bundle", "migrate"]);
    assert.deepEqual(pod.containers.map((c: { name: string }) => c.name), ["api-server", "proxy"]);
    assert.ok(pod.volumes.some((v: { name: string }) => v.name === "cfg"));
    assert.ok(pod.containers[0].volumeMounts.some((m: { mountPath: string }) => m.mountPath === "/etc/agent"));
    assert.equal(api.spec.template.metadata.labels.team, "agents");
    assert.equal(api.spec.template.metadata.annotations["example.com/owner"], "agents");
    assert.ok(
      pod.containers[0].env.some((e: any) => e.name === "DB_PASS" && e.valueFrom.secretKeyRef.key === "password"),
    );
    const queue = byName("Deployment", "-queue");
    assert.equal(queue.spec.replicas, 1);
    assert.deepEqual(queue.spec.template.spec.containers[0].resources.limits, { cpu: "500m", memory: "512Mi" });
    // The API replicas run no runs; the queue workers run the queue, sized from queue_cpu (4 per CPU, at least 4).
    const envOf = (d: any) =>
      Object.fromEntries(d.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
    assert.equal(envOf(api).AGENTCLI_ROLE, "api");
    assert.equal(envOf(queue).AGENTCLI_ROLE, "worker");
    assert.equal(envOf(queue).AGENTCLI_WORKERS, "4");
    // Behind the Service or an ingress many clients share an address: no bound per client address.
    assert.equal(envOf(api).AGENTCLI_MAX_CONNECTIONS_PER_CLIENT, "0");
    const hpas = objects.filter((o) => o.kind === "HorizontalPodAutoscaler") as any[];
    assert.deepEqual(hpas.map((h) => [h.spec.minReplicas, h.spec.maxReplicas]), [[2, 6], [1, 4]]);
    const db = byName("StatefulSet", "-postgres");
    assert.deepEqual(db.spec.template.spec.containers[0].args, ["-c", "max_connections=200"]);
    assert.equal(db.spec.volumeClaimTemplates[0].spec.resources.requests.storage, "20Gi");
    assert.deepEqual(db.spec.template.spec.containers[0].resources.limits, { cpu: "2000m", memory: "2048Mi" });
    const redis = byName("Deployment", "-redis");
    assert.deepEqual(redis.spec.template.spec.containers[0].resources.requests, { cpu: "100m", memory: "128Mi" });
    assert.ok(byName("Service", "-postgres") && byName("Service", "-redis"));
    for (const o of objects) assert.match(o.metadata.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });

  test("a bundle: an init container downloads it with the token from a Secret into a shared volume; the server runs agentcli serve on it", () => {
    const objects = render(FULL_SPEC);
    const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name.endsWith("-bundle")) as any;
    assert.deepEqual(secret.stringData, { token: "bdl_secret-token" });
    for (const d of objects.filter((o) => o.kind === "Deployment" && !o.metadata.name.endsWith("-redis")) as any[]) {
      const pod = d.spec.template.spec;
      assert.ok(!JSON.stringify(d).includes("bdl_secret-token"), "the token stays in the Secret");
      const fetcher = pod.initContainers[0];
      assert.equal(fetcher.name, "fetch-bundle");
      assert.deepEqual(fetcher.command.slice(0, 2), ["sh", "-c"]);
      assert.match(fetcher.command[2], /Authorization: Bearer \$AGENTCLI_BUNDLE_TOKEN/);
      const env = Object.fromEntries(fetcher.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
      assert.equal(env.AGENTCLI_BUNDLE_URL, "http://cp.example/v2/deployments/d/revisions/r/bundle");
      assert.equal(env.AGENTCLI_BUNDLE_PATH, "/bundle/bundle.tgz");
      assert.deepEqual(env.AGENTCLI_BUNDLE_TOKEN, { secretKeyRef: { name: secret.metadata.name, key: "token" } });
      assert.deepEqual(fetcher.volumeMounts, [{ name: "agentcli-bundle", mountPath: "/bundle" }]);
      assert.ok(pod.volumes.some((v: any) => v.name === "agentcli-bundle" && v.emptyDir));
      const server = pod.containers[0];
      assert.deepEqual(server.command.slice(0, 3), ["agentcli", "serve", "/bundle/bundle.tgz"]);
      assert.ok(
        server.volumeMounts.some((m: any) => m.name === "agentcli-bundle" && m.mountPath === "/bundle" && m.readOnly),
      );
    }
  });

  test("the API and the queue workers are two Deployments sized apart from resource_spec", () => {
    const objects = render({ min_scale: 1, cpu: 0.5, queue_min_scale: 3, queue_cpu: 2, queue_memory_mb: 1024 });
    for (const o of objects) new MODELS[`${o.apiVersion}/${o.kind}`]!(o).validate();
    const deployments = objects.filter((o) => o.kind === "Deployment" && !o.metadata.name.endsWith("-redis")) as any[];
    assert.deepEqual(deployments.map((d) => d.metadata.name.split("-").at(-1)).sort(), ["api", "queue"]);
    const api = deployments.find((d) => d.metadata.name.endsWith("-api"));
    const queue = deployments.find((d) => d.metadata.name.endsWith("-queue"));
    const envOf = (d: any) =>
      Object.fromEntries(
        d.spec.template.spec.containers[0].env.filter((e: any) => "value" in e).map((e: any) => [e.name, e.value]),
      );
    assert.equal(api.spec.replicas, 1);
    assert.equal(queue.spec.replicas, 3);
    assert.deepEqual(api.spec.template.spec.containers[0].resources.requests, { cpu: "500m" });
    assert.deepEqual(queue.spec.template.spec.containers[0].resources.requests, { cpu: "2000m", memory: "1024Mi" });
    assert.equal(envOf(api).AGENTCLI_ROLE, "api");
    assert.equal(envOf(api).AGENTCLI_WORKERS, undefined, "the API replicas run no runs");
    assert.equal(envOf(queue).AGENTCLI_ROLE, "worker");
    assert.equal(envOf(queue).AGENTCLI_WORKERS, "8", "4 runs per requested CPU of the queue workers");
    // Without queue_cpu, a worker sizes itself from the CPUs it sees (serve's default).
    const [, bare] = render({}).filter((o) => o.kind === "Deployment") as any[];
    assert.ok(bare.metadata.name.endsWith("-queue"));
    assert.equal(envOf(bare).AGENTCLI_ROLE, "worker");
    assert.equal(envOf(bare).AGENTCLI_WORKERS, undefined);
  });

  test("an empty resource_spec renders valid defaults with no autoscaler", () => {
    const objects = render({}, { bundle: null });
    for (const o of objects) new MODELS[`${o.apiVersion}/${o.kind}`]!(o).validate();
    assert.equal(objects.filter((o) => o.kind === "HorizontalPodAutoscaler").length, 0);
    const api = objects.find((o) => o.kind === "Deployment") as any;
    assert.equal(api.spec.template.spec.initContainers, undefined, "an image needs no bundle download");
    assert.equal(api.spec.template.spec.containers[0].command, undefined);
    assert.ok(!objects.some((o) => o.metadata.name.endsWith("-bundle")));
  });

  test("the schemas do catch a broken manifest (the check can fail)", () => {
    const [api] = render({}).filter((o) => o.kind === "Deployment");
    const broken = JSON.parse(JSON.stringify(api));
    broken.spec.replicas = "two";
    assert.throws(() => new Deployment(broken).validate());
  });
});

describe("apply through the Kubernetes API", () => {
  let kube: Awaited<ReturnType<typeof fakeKubeApi>>;
  let t: TestPlatform;
  before(async () => {
    kube = await fakeKubeApi();
    t = await startTestPlatform();
  });
  after(async () => {
    await t?.close();
    kube?.server.close();
  });

  test("creates each object, then patches on the next apply; create-only secrets are kept", async () => {
    const client = KubeClient.fromKubeconfig(kubeconfig(kube.url));
    const objects = render(FULL_SPEC);
    const first = await client.apply(objects);
    assert.ok(first.every((r) => r.action === "created"));
    assert.ok(
      kube.objects.has(
        `/apis/apps/v1/namespaces/agents/deployments/${objects.find((o) => o.kind === "Deployment")!.metadata.name}`,
      ),
    );
    assert.ok(
      [...kube.objects.keys()].some((k) =>
        k.startsWith("/apis/autoscaling/v2/namespaces/agents/horizontalpodautoscalers/")
      ),
    );
    assert.ok([...kube.objects.keys()].some((k) => k.startsWith("/api/v1/namespaces/agents/secrets/")));
    const second = await client.apply(objects);
    assert.ok(
      second.filter((r) => r.kind === "Secret" && r.name.endsWith("-postgres-auth")).every((r) => r.action === "kept"),
    );
    assert.ok(second.filter((r) => r.kind === "Deployment").every((r) => r.action === "updated"));
    assert.ok(kube.requests.some((r) => r.startsWith("PATCH") && r.includes("merge-patch")));
    const denied = KubeClient.fromKubeconfig(kubeconfig(kube.url).replace("kube-token", "wrong"));
    await assert.rejects(denied.apply(objects), /answered 401/);
  });

  test("a deployment on a k8s listener is applied and reaches DEPLOYED; deleting it removes the objects", async () => {
    const listener = await t.call("POST", "/v2/listeners", {
      body: { compute_type: "k8s", compute_id: "cluster-e2e", compute_config: { k8s_namespaces: ["prod"] } },
    });
    const withoutConfig = await t.call("POST", "/v2/deployments", {
      body: {
        name: "k8s-noconfig",
        source: "internal_container",
        source_config: { listener_id: listener.body.id },
        source_revision_config: { image_uri: "registry.example/agent:1" },
      },
    });
    const failed = await until(async () => {
      const r = await t.call(
        "GET",
        `/v2/deployments/${withoutConfig.body.id}/revisions/${withoutConfig.body.latest_revision_id}`,
      );
      return r.body.status === "DEPLOY_FAILED" ? r.body : null;
    }, "DEPLOY_FAILED");
    assert.match(failed.status_message, /no kubeconfig/);
    await setListenerKubeconfig(t.platform.sql, listener.body.id, kubeconfig(kube.url));
    const d = await t.call("POST", "/v2/deployments", {
      body: {
        name: "k8s-agent",
        source: "internal_container",
        source_config: {
          listener_id: listener.body.id,
          listener_config: { k8s_namespace: "prod" },
          resource_spec: { min_scale: 1, max_scale: 3 },
        },
        source_revision_config: { image_uri: "registry.example/agent:7" },
        secrets: [{ name: "K", value: "v" }],
      },
    });
    assert.equal(d.status, 201, JSON.stringify(d.body));
    const rev = await until(async () => {
      const r = await t.call("GET", `/v2/deployments/${d.body.id}/revisions/${d.body.latest_revision_id}`);
      return ["DEPLOYED", "DEPLOY_FAILED"].includes(r.body.status) ? r.body : null;
    }, "k8s rollout");
    assert.equal(rev.status, "DEPLOYED", rev.status_message);
    const dep = await t.call("GET", `/v2/deployments/${d.body.id}`);
    assert.equal(dep.body.active_revision_id, rev.id);
    assert.match(dep.body.url, /\.prod\.svc\.cluster\.local$/);
    const api = [...kube.objects.entries()].find(([k]) =>
      k.startsWith("/apis/apps/v1/namespaces/prod/deployments/k8s-agent") && k.endsWith("-api")
    );
    assert.ok(api, [...kube.objects.keys()].join("\n"));
    assert.equal(api[1].spec.template.spec.containers[0].image, "registry.example/agent:7");
    assert.equal((await t.call("DELETE", `/v2/deployments/${d.body.id}`)).status, 202);
    await until(async () => (await t.call("GET", `/v2/deployments/${d.body.id}`)).status === 404, "deleted");
    assert.ok(![...kube.objects.keys()].some((k) => k.includes("/prod/") && k.includes("k8s-agent")));
  });

  test("internal_source on a k8s listener: the applied init container downloads the revision's bundle with the deployment's token", async () => {
    const listener = await t.call("POST", "/v2/listeners", {
      body: { compute_type: "k8s", compute_id: "cluster-bundles", compute_config: { k8s_namespaces: ["apps"] } },
    });
    await setListenerKubeconfig(t.platform.sql, listener.body.id, kubeconfig(kube.url));
    const d = await t.call("POST", "/v2/deployments", {
      body: { name: "k8s-src", source: "internal_source", source_config: { listener_id: listener.body.id } },
    });
    assert.equal(d.status, 201, JSON.stringify(d.body));
    const bundle = await makeBundle({ name: "k8s-src-agent" });
    const upload = async () => {
      const u = await t.call("POST", `/v2/deployments/${d.body.id}/upload-url`);
      const target = new URL(u.body.upload_url);
      const put = await t.platform.app.request(target.pathname + target.search, {
        method: "PUT",
        body: bundle as Uint8Array<ArrayBuffer>,
      });
      assert.equal(put.status, 200);
      const p = await t.call("PATCH", `/v2/deployments/${d.body.id}`, {
        body: { source_revision_config: { source_tarball_path: u.body.object_path } },
      });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      return until(async () => {
        const r = await t.call("GET", `/v2/deployments/${d.body.id}/revisions/${p.body.latest_revision_id}`);
        return ["DEPLOYED", "DEPLOY_FAILED", "BUILD_FAILED"].includes(r.body.status) ? r.body : null;
      }, "k8s bundle rollout");
    };
    const noAddress = await upload();
    assert.equal(noAddress.status, "DEPLOY_FAILED");
    assert.match(noAddress.status_message, /--public-url/);

    const { url: base } = await t.platform.listen({ port: 0 });
    t.platform.services.publicUrl = base;
    const rev = await upload();
    assert.equal(rev.status, "DEPLOYED", rev.status_message);
    const apiKey = [...kube.objects.keys()].find((k) =>
      k.startsWith("/apis/apps/v1/namespaces/apps/deployments/k8s-src") && k.endsWith("-api")
    )!;
    const pod = kube.objects.get(apiKey).spec.template.spec;
    assert.equal(kube.objects.get(apiKey).spec.template.metadata.annotations["agentcli.dev/revision-id"], rev.id);
    const fetcher = pod.initContainers.find((c: any) => c.name === "fetch-bundle");
    const env: Record<string, any> = Object.fromEntries(fetcher.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
    assert.equal(env.AGENTCLI_BUNDLE_URL, `${base}/v2/deployments/${d.body.id}/revisions/${rev.id}/bundle`);
    const secretPath = `/api/v1/namespaces/apps/secrets/${env.AGENTCLI_BUNDLE_TOKEN.secretKeyRef.name}`;
    const token: string = kube.objects.get(secretPath).stringData[env.AGENTCLI_BUNDLE_TOKEN.secretKeyRef.key];
    assert.match(token, /^bdl_/);
    new Deployment(kube.objects.get(apiKey)).validate();

    // Run the init container's own command (sh + curl), with its env as the pod would get it.
    const dir = mkdtempSync(join(tmpdir(), "agentcli-bundle-fetch-"));
    try {
      // Asynchronously: the control plane answering the download runs in this process.
      await promisify(execFile)("sh", ["-c", fetcher.command[2]], {
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          AGENTCLI_BUNDLE_URL: env.AGENTCLI_BUNDLE_URL,
          AGENTCLI_BUNDLE_PATH: join(dir, "bundle.tgz"),
          AGENTCLI_BUNDLE_TOKEN: token,
        },
      });
      assert.deepEqual(new Uint8Array(readFileSync(join(dir, "bundle.tgz"))), bundle);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const get = (url: string, headers: Record<string, string> = {}) =>
      fetch(url, { headers }).then(async (r) => ({ status: r.status, text: await r.text() }));
    assert.equal((await get(env.AGENTCLI_BUNDLE_URL)).status, 401);
    assert.equal((await get(env.AGENTCLI_BUNDLE_URL, { authorization: "Bearer bdl_wrong" })).status, 401);
    assert.equal((await get(env.AGENTCLI_BUNDLE_URL, { "x-api-key": t.keyA })).status, 200);
    const otherTenant = await get(env.AGENTCLI_BUNDLE_URL, { "x-api-key": t.keyB });
    assert.equal(otherTenant.status, 404);
    const other = await t.call("POST", "/v2/deployments", {
      body: { name: "k8s-img", source: "internal_container", source_revision_config: { image_uri: "a:1" } },
    });
    const foreign = await get(
      `${base}/v2/deployments/${other.body.id}/revisions/${other.body.latest_revision_id}/bundle`,
      { authorization: `Bearer ${token}` },
    );
    assert.equal(foreign.status, 401, "a deployment's token reaches only its own bundles");
    const image = await get(
      `${base}/v2/deployments/${other.body.id}/revisions/${other.body.latest_revision_id}/bundle`,
      { "x-api-key": t.keyA },
    );
    assert.equal(image.status, 404);
    assert.match(JSON.parse(image.text).detail, /no bundle/);
    assert.ok(
      !(await t.call("GET", `/v2/deployments/${d.body.id}`)).body.source_revision_config.source_tarball_path.includes(
        token,
      ),
    );
  });
});
