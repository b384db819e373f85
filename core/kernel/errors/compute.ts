/**
 * The error catalogue: the control plane's compute (REMOTE_FAILED, DEPLOY_FAILED): revisions run as local
 * processes or on a listener's Kubernetes cluster, and the sandboxes on such a cluster. A rollout's error
 * becomes its revision's status message, so these messages are written to read after "DEPLOY_FAILED: ".
 * Entries of one area; core/kernel/errors-data.ts lists every area (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

const kubeconfigFix =
  'Set a working kubeconfig: "agentcli platform admin set-kubeconfig --listener <id> --kubeconfig <file>".';

/** A listener's kubeconfig that is not YAML or JSON the Kubernetes client reads. */
export const KubeconfigUnreadable = {
  name: "KubeconfigUnreadable",
  code: "REMOTE_FAILED",
  title: "A listener's kubeconfig cannot be read.",
  message: (v: { reason: string }) => `the kubeconfig cannot be read: ${v.reason}`,
  hint: kubeconfigFix,
} as const satisfies ErrorData;

/** A listener's kubeconfig whose current context has no cluster server. */
export const KubeconfigNoServer = {
  name: "KubeconfigNoServer",
  code: "REMOTE_FAILED",
  title: "A listener's kubeconfig names no cluster server in its current context.",
  message: "the kubeconfig names no cluster server",
  hint: kubeconfigFix,
} as const satisfies ErrorData;

/** The Kubernetes API refused a call (`detail` is its message, with its leading ": ", or empty). */
export const KubeApiRefused = {
  name: "KubeApiRefused",
  code: "REMOTE_FAILED",
  title: "A listener's Kubernetes API answered a call with an error.",
  message: (v: { action: string; status: number; detail: string }) =>
    `cannot ${v.action}: the Kubernetes API answered ${v.status}${v.detail}`,
  hint: "Check that the kubeconfig's account may do this in the namespace (its RBAC role), and the cluster's events.",
} as const satisfies ErrorData;

/** The Kubernetes API did not answer a call. */
export const KubeApiUnreachable = {
  name: "KubeApiUnreachable",
  code: "REMOTE_FAILED",
  title: "A listener's Kubernetes API cannot be reached.",
  message: (v: { action: string; server: string; reason: string }) =>
    `cannot ${v.action}: cannot reach the Kubernetes API at ${v.server}: ${v.reason}`,
  hint: "Check that the control plane reaches the cluster's API server (the kubeconfig's server address).",
} as const satisfies ErrorData;

/** The Kubernetes API refused to run a command in a pod (pods/exec). */
export const KubeExecRefused = {
  name: "KubeExecRefused",
  code: "REMOTE_FAILED",
  title: "A listener's Kubernetes API refused to run a command in a pod.",
  message: (v: { status: string }) => `the Kubernetes API answered ${v.status}`,
  hint: "Check that the kubeconfig's account may create pods/exec in the namespace (its RBAC role).",
} as const satisfies ErrorData;

/** The Kubernetes API did not answer a pods/exec call. */
export const KubeExecUnreachable = {
  name: "KubeExecUnreachable",
  code: "REMOTE_FAILED",
  title: "A listener's Kubernetes API cannot be reached to run a command in a pod.",
  message: (v: { server: string; reason: string }) => `cannot reach the Kubernetes API at ${v.server}: ${v.reason}`,
  hint: "Check that the control plane reaches the cluster's API server (the kubeconfig's server address).",
} as const satisfies ErrorData;

/** A revision's Deployment vanished while the rollout waited for it. */
export const KubeDeploymentGone = {
  name: "KubeDeploymentGone",
  code: "DEPLOY_FAILED",
  title: "A revision's Kubernetes Deployment was deleted while its rollout waited for it.",
  message: (v: { name: string }) => `cannot read Deployment "${v.name}": the Kubernetes API answered 404`,
  hint: "Deploy again; check that nothing else deletes the control plane's objects in that namespace.",
} as const satisfies ErrorData;

/** A revision's Deployment did not run its replicas within the rollout's wait. */
export const KubeDeploymentUnavailable = {
  name: "KubeDeploymentUnavailable",
  code: "DEPLOY_FAILED",
  title: "A revision's Kubernetes Deployment did not become available in time.",
  message: (v: { name: string }) => `Deployment "${v.name}" did not become available`,
  hint: 'See the deploy log and the pods\' events ("kubectl describe pod"): an image pull, a crash, a failing probe.',
} as const satisfies ErrorData;

/** A k8s deployment whose source_config names no listener. */
export const K8sDeploymentNoListener = {
  name: "K8sDeploymentNoListener",
  code: "DEPLOY_FAILED",
  title: "A deployment on Kubernetes names no listener.",
  message: "a k8s deployment needs source_config.listener_id",
  hint: "Set source_config.listener_id to a k8s listener of yours (GET /v2/listeners).",
} as const satisfies ErrorData;

/** A k8s listener without a kubeconfig. */
export const ListenerNoKubeconfig = {
  name: "ListenerNoKubeconfig",
  code: "DEPLOY_FAILED",
  title: "A k8s listener has no kubeconfig.",
  message: (v: { computeId: string; listener: string }) =>
    `listener "${v.computeId}" has no kubeconfig; run "agentcli platform admin set-kubeconfig --listener ${v.listener} --kubeconfig <file>"`,
  hint: (v: { listener: string }) =>
    `Run "agentcli platform admin set-kubeconfig --listener ${v.listener} --kubeconfig <file>".`,
} as const satisfies ErrorData;

/** A bundle deployment on a cluster while the control plane has no public address to serve the bundle from. */
export const ControlPlaneNoPublicUrl = {
  name: "ControlPlaneNoPublicUrl",
  code: "DEPLOY_FAILED",
  title: "A cluster must fetch a bundle, but the control plane has no public address.",
  message:
    "this control plane has no public address for the cluster to fetch the bundle from; start it with --public-url <address the cluster reaches>",
  hint: 'Start "agentcli platform serve" with --public-url <an address the cluster reaches>.',
} as const satisfies ErrorData;

/** A LangGraph.js revision whose build installed npm packages, deployed to a cluster (its pods cannot reach them). */
export const KubernetesPackagesUnsupported = {
  name: "KubernetesPackagesUnsupported",
  code: "DEPLOY_FAILED",
  title: "A revision needing installed npm packages is deployed to a Kubernetes listener.",
  message:
    "the k8s compute cannot give a revision the npm packages its build installed for the LangGraph.js project's dependencies: the pods fetch only the bundle from the control plane (the packages stay on its machine) and do not install packages themselves",
  hint:
    "Deploy the project to a local listener, or drop from its dependencies the packages agentcli does not lend (@langchain/*, langchain, hono, zod), putting that code among its sources.",
} as const satisfies ErrorData;

/** A container image deployed to the local listener (it runs bundles only). */
export const LocalListenerNoImages = {
  name: "LocalListenerNoImages",
  code: "DEPLOY_FAILED",
  title: "A container image is deployed where revisions run as local processes.",
  message: (v: { image: string }) =>
    `the local listener runs agentcli bundles only; image "${v.image}" needs a k8s listener (source_config.listener_id)`,
  hint: "Deploy a bundle (agentcli deploy), or name a k8s listener in source_config.listener_id.",
} as const satisfies ErrorData;

/** A local revision process that exited before `/ok` answered. */
export const RevisionProcessExited = {
  name: "RevisionProcessExited",
  code: "DEPLOY_FAILED",
  title: "A revision's process exited before it was healthy.",
  message: (v: { code: string; tail: string }) =>
    `the revision process exited (${v.code}) before it was healthy${v.tail ? `: ${v.tail}` : ""}`,
  hint: 'See the deploy log; run the bundle with "agentcli serve <bundle>" to see it start.',
} as const satisfies ErrorData;

/** A local revision process that did not answer `/ok` within the wait. */
export const RevisionProcessUnhealthy = {
  name: "RevisionProcessUnhealthy",
  code: "DEPLOY_FAILED",
  title: "A revision's process did not answer its health check in time.",
  message: (v: { seconds: number }) => `the revision did not answer GET /ok within ${v.seconds}s`,
  hint: 'See the deploy log; run the bundle with "agentcli serve <bundle>" to see how long it takes to start.',
} as const satisfies ErrorData;

/** Stopping a sandbox's pod failed (HTTP 503). */
export const SandboxStopFailed = {
  name: "SandboxStopFailed",
  code: "REMOTE_FAILED",
  title: "A sandbox's pod on a listener's cluster could not be stopped.",
  message: (v: { reason: string }) => `Cannot stop the sandbox: ${v.reason}`,
  hint: "Check the listener's cluster and kubeconfig, then stop the sandbox again.",
} as const satisfies ErrorData;

/** Deleting a sandbox's objects failed (HTTP 503). */
export const SandboxDeleteFailed = {
  name: "SandboxDeleteFailed",
  code: "REMOTE_FAILED",
  title: "A sandbox's objects on a listener's cluster could not be deleted.",
  message: (v: { reason: string }) => `Cannot delete the sandbox: ${v.reason}`,
  hint: "Check the listener's cluster and kubeconfig, then delete the sandbox again.",
} as const satisfies ErrorData;

/** Running a command in a sandbox's pod failed (HTTP 503). */
export const SandboxExecFailed = {
  name: "SandboxExecFailed",
  code: "REMOTE_FAILED",
  title: "A command could not be run in a sandbox's pod on a listener's cluster.",
  message: (v: { reason: string }) => `Cannot run a command in the sandbox's pod: ${v.reason}`,
  hint: "Check that the sandbox's pod runs and that the kubeconfig's account may create pods/exec.",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const COMPUTE_ERRORS: readonly ErrorData[] = [
  KubeconfigUnreadable,
  KubeconfigNoServer,
  KubeApiRefused,
  KubeApiUnreachable,
  KubeExecRefused,
  KubeExecUnreachable,
  KubeDeploymentGone,
  KubeDeploymentUnavailable,
  K8sDeploymentNoListener,
  ListenerNoKubeconfig,
  ControlPlaneNoPublicUrl,
  KubernetesPackagesUnsupported,
  LocalListenerNoImages,
  RevisionProcessExited,
  RevisionProcessUnhealthy,
  SandboxStopFailed,
  SandboxDeleteFailed,
  SandboxExecFailed,
];
