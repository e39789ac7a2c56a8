import type { Cluster } from "../types.js";
import { findDuplicates } from "./find-duplicates.js";
import type { RuleContext } from "./rule.js";

/**
 * No two push-mode Clusters may reach the same member by the same credentials (the same context of
 * the same kubeconfig source): they would fight over its one inventory, each pruning what the other
 * applied. Clusters that reach one API server through different references are caught when the
 * controller connects (see sync/connections.ts).
 */
export function checkClusterConnections({ model, reporter }: RuleContext): void {
  const push = model.clusters.filter(
    (c) => (c.spec.connection?.mode ?? "push") === "push" && c.spec.controlPlane === undefined,
  );
  for (const { item, earlier } of findDuplicates(push, memberOf)) {
    reporter.report({
      origin: item.origin,
      path: item.spec.connection ? ["spec", "connection"] : ["metadata", "name"],
      code: "DUPLICATE_MEMBER",
      message: `cluster ${item.metadata.name} reaches the same member as cluster ${earlier.metadata.name} (${reporter.where(earlier.origin)}): ${describeMember(item)}; each member is one Cluster`,
    });
  }
}

// The kubeconfig source and context a push-mode Cluster connects through.
function memberOf(cluster: Cluster): string {
  const connection = cluster.spec.connection ?? {};
  const source = connection.kubeconfigEnv
    ? `env:${connection.kubeconfigEnv}`
    : connection.kubeconfigFile
      ? `file:${connection.kubeconfigFile}`
      : "kubeconfig";
  return `${source} ${connection.context ?? cluster.metadata.name}`;
}

function describeMember(cluster: Cluster): string {
  const connection = cluster.spec.connection ?? {};
  const context = `context "${connection.context ?? cluster.metadata.name}"`;
  if (connection.kubeconfigEnv) return `${context} of ${connection.kubeconfigEnv}`;
  if (connection.kubeconfigFile) return `${context} of kubeconfig file ${connection.kubeconfigFile}`;
  return `${context} of the controller's kubeconfig`;
}
