/**
 * The API discovery documents a Kubernetes API server serves at `/api/v1` and
 * `/apis/<group>/<version>` (an `APIResourceList`): `@kubernetes/client-node` finds each kind's
 * REST resource there. Shared by the local API-server stand-ins of the platform tests.
 */
const RESOURCES: Record<string, Array<[kind: string, plural: string]>> = {
  "/api/v1": [["Secret", "secrets"], ["Service", "services"], ["ConfigMap", "configmaps"], ["Pod", "pods"], [
    "PersistentVolumeClaim",
    "persistentvolumeclaims",
  ]],
  "/apis/apps/v1": [["Deployment", "deployments"], ["StatefulSet", "statefulsets"]],
  "/apis/autoscaling/v2": [["HorizontalPodAutoscaler", "horizontalpodautoscalers"]],
  "/apis/networking.k8s.io/v1": [["NetworkPolicy", "networkpolicies"]],
};

/** The discovery document at `path`, or null when `path` is not a group version's root. */
export function discoveryDocument(path: string): Record<string, unknown> | null {
  const kinds = RESOURCES[path];
  if (!kinds) return null;
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: path.replace(/^\/apis?\//, ""),
    resources: kinds.map(([kind, name]) => ({
      name,
      singularName: kind.toLowerCase(),
      namespaced: true,
      kind,
      verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    })),
  };
}
