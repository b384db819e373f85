/**
 * The control plane's sandboxes on a `k8s` listener: their manifests pass the Kubernetes
 * schemas, and driven by the `langsmith/sandbox` client they are pods from `image` on the
 * listener's cluster (a stand-in API speaking the exec WebSocket protocol v5): commands, binary
 * files, stop (pod deleted, claim kept) and resume, delete (every object gone).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { PersistentVolumeClaim, Pod } from "kubernetes-models/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { LangSmithCommandTimeoutError, SandboxClient } from "langsmith/sandbox";
import { renderSandboxManifests, sandboxPodName } from "../../core/platform/sandboxes/k8s.ts";
import { createListener, setListenerKubeconfig } from "../../core/platform/store/tenancy.ts";
import { type KubeStandIn, startKubeStandIn } from "./_kube-sandbox.ts";
import { startTestPlatform, type TestPlatform } from "./_harness.ts";

describe("sandbox manifests", () => {
  test("claim, network policy and pod pass the Kubernetes schemas", () => {
    const objects = renderSandboxManifests({
      id: "0b7c2f3e-1d2c-4e5f-8a9b-0c1d2e3f4a5b",
      tenantId: "t",
      image: "python:3.12",
      namespace: "boxes",
      memBytes: 512 * 2 ** 20,
      vcpus: 2,
      fsCapacityBytes: 3 * 2 ** 30,
    });
    const models: Record<string, new (o: any) => { validate(): void }> = { Pod, PersistentVolumeClaim, NetworkPolicy };
    assert.deepEqual(objects.map((o) => o.kind), ["PersistentVolumeClaim", "NetworkPolicy", "Pod"]);
    for (const o of objects) assert.doesNotThrow(() => new models[o.kind]!(o).validate(), o.kind);
    const pod = objects[2] as any;
    assert.equal(pod.metadata.name, "sandbox-0b7c2f3e1d2c4e5f8a9b0c1d2e3f4a5b");
    assert.equal(pod.spec.containers[0].image, "python:3.12");
    assert.equal(pod.spec.automountServiceAccountToken, false);
    assert.deepEqual(pod.spec.containers[0].resources.limits, { memory: String(512 * 2 ** 20), cpu: "2" });
    assert.equal((objects[0] as any).spec.resources.requests.storage, "3Gi");
    assert.deepEqual((objects[1] as any).spec.egress, []);
  });
});

describe("sandboxes as pods on a k8s listener", () => {
  let t: TestPlatform;
  let kube: KubeStandIn;
  let listenerId = "";
  let client: SandboxClient;

  before(async () => {
    kube = await startKubeStandIn();
    t = await startTestPlatform({ listen: { port: 0 }, sandboxSweepMs: 0 });
    const l = await createListener(t.platform.sql, {
      tenantId: t.tenantA,
      computeType: "k8s",
      computeId: "cluster",
      computeConfig: { k8s_namespaces: ["boxes"] },
      version: null,
    });
    await setListenerKubeconfig(t.platform.sql, l.id, kube.kubeconfig);
    listenerId = l.id;
    client = new SandboxClient({
      apiEndpoint: `${t.platform.listening!.url}/v2/sandboxes`,
      apiKey: t.keyA,
      maxRetries: 0,
    });
  });
  after(async () => {
    await t?.close();
    await kube?.close();
  });

  const create = (body: unknown, key = t.keyA) =>
    fetch(`${t.platform.listening!.url}/v2/sandboxes/boxes`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  test("a sandbox is a pod from its image; commands and binary files go through pods/exec", async () => {
    const res = await create({ name: "pod-box", image: "python:3.12", listener_id: listenerId });
    assert.equal(res.status, 201);
    const created = await res.json();
    const pod = kube.objects.get(`/api/v1/namespaces/boxes/pods/${sandboxPodName(created.id)}`);
    assert.equal(pod.spec.containers[0].image, "python:3.12");
    assert.ok(kube.objects.has(`/api/v1/namespaces/boxes/persistentvolumeclaims/${sandboxPodName(created.id)}`));
    assert.ok(
      kube.objects.has(`/apis/networking.k8s.io/v1/namespaces/boxes/networkpolicies/${sandboxPodName(created.id)}`),
    );

    const box = await client.getSandbox("pod-box");
    // The stand-in runs commands on the local runtime, whose output carries stderr within stdout.
    assert.deepEqual(await box.run("echo out; pwd; exit 5"), { stdout: "out\n/workspace\n", stderr: "", exit_code: 5 });
    assert.equal((await box.run("echo $GREETING", { env: { GREETING: "hello" }, cwd: "/tmp" })).stdout, "hello\n");
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 7) % 256);
    await box.write("/workspace/in/data.bin", bytes);
    assert.deepEqual(await box.read("/workspace/in/data.bin"), bytes);
    await assert.rejects(box.read("/workspace/none"), /no such file/);
    await assert.rejects(box.run("sleep 20", { timeout: 1 }), LangSmithCommandTimeoutError);
    assert.ok(kube.execs.some((e) => e.protocol === "v5.channel.k8s.io" && e.argv.includes("timeout")));

    await client.stopSandbox("pod-box");
    assert.equal(kube.objects.has(`/api/v1/namespaces/boxes/pods/${sandboxPodName(created.id)}`), false);
    assert.deepEqual(
      await box.read("/workspace/in/data.bin"),
      bytes,
      "files survive a stop: the claim is kept and a new pod mounts it",
    );
    assert.ok(kube.objects.has(`/api/v1/namespaces/boxes/pods/${sandboxPodName(created.id)}`));

    await box.delete();
    assert.deepEqual([...kube.objects.keys()].filter((k) => k.includes(sandboxPodName(created.id))), []);
  });

  test("listener_id must be a k8s listener of the caller's tenant", async () => {
    const theirs = await create({ name: "x", listener_id: listenerId }, t.keyB);
    assert.equal(theirs.status, 422);
    assert.match(JSON.stringify(await theirs.json()), /not a listener of yours/);
  });

  test("a pod that cannot start leaves nothing behind", async () => {
    await setListenerKubeconfig(t.platform.sql, listenerId, kube.kubeconfig.replace("sandbox-kube-token", "wrong"));
    try {
      const res = await create({ name: "doomed", listener_id: listenerId });
      assert.equal(res.status, 503);
      assert.match((await res.json()).detail, /Cannot create sandbox "doomed".*401/);
      assert.deepEqual((await client.listSandboxes()).map((s) => s.name), []);
    } finally {
      await setListenerKubeconfig(t.platform.sql, listenerId, kube.kubeconfig);
    }
  });
});
