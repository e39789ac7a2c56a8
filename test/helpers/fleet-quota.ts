/** A FederatedResourceQuota for namespace shop: its overall limits and per-cluster hard limits (flow-style YAML maps). */
export function quotaFile(overall: string, assignments: Record<string, string> = {}, name = "shop"): string {
  const entries = Object.entries(assignments)
    .map(([cluster, hard]) => `    - clusterName: ${cluster}\n      hard: {${hard}}\n`)
    .join("");
  return `apiVersion: gitfleet.io/v1alpha1
kind: FederatedResourceQuota
metadata:
  name: ${name}
  namespace: shop
spec:
  overall: {${overall}}
${entries ? `  staticAssignments:\n${entries}` : ""}`;
}
