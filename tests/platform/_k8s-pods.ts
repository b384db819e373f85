/**
 * The stand-in cluster's pods (./_kube-api.ts): a test runs an agent Deployment's pod here as a
 * real `agentcli serve`, the bundle downloaded the way the pod's init container does, with the
 * pod's environment and Secrets (the cluster's own stores do not run here: the pod keeps its
 * data in its folder).
 */
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { selfInvocation } from "../../core/kernel/index.ts";
import { RevisionProcess } from "../../plugins/compute/revision-process.ts";
import type { FakeKube } from "./_kube-api.ts";

/** Starts the pod of Deployment `d` (in `namespace`) in a folder under `work`; `env` overrides its environment. */
export async function runPod(
  kube: FakeKube,
  d: any,
  o: { namespace: string; work: string; env?: Record<string, string> },
): Promise<RevisionProcess> {
  const pod = d.spec.template.spec;
  const secret = (name: string) => kube.objects.get(`/api/v1/namespaces/${o.namespace}/secrets/${name}`).stringData;
  const fetcher = pod.initContainers.find((c: any) => c.name === "fetch-bundle");
  const fetchEnv = Object.fromEntries(fetcher.env.map((e: any) => [e.name, e]));
  const token = secret(fetchEnv.AGENTCLI_BUNDLE_TOKEN.valueFrom.secretKeyRef.name).token;
  const res = await fetch(fetchEnv.AGENTCLI_BUNDLE_URL.value, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  const dir = await mkdtemp(join(o.work, "pod-"));
  await writeFile(join(dir, "bundle.tgz"), new Uint8Array(await res.arrayBuffer()));
  const server = pod.containers[0];
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: dir };
  for (const e of server.env) if ("value" in e && !/^(DATABASE|REDIS)_URL$/.test(e.name)) env[e.name] = e.value;
  for (const from of server.envFrom) Object.assign(env, secret(from.secretRef.name));
  const p = new RevisionProcess({
    revisionId: d.spec.template.metadata.annotations["agentcli.dev/revision-id"],
    bundlePath: join(dir, "bundle.tgz"),
    dataDir: join(dir, "data"),
    host: "127.0.0.1",
    env: { ...env, ...o.env },
    log: () => {},
    command: selfInvocation(),
  });
  await p.start();
  return p;
}
