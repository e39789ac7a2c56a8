import type { FileTree } from "../model/file-tree.js";
import type { Problem } from "../model/problem.js";
import type { FleetModel } from "../model/types.js";
import { locateInTree } from "./replicas-under-autoscalers.js";

// A hosted cluster whose controlPlane.host a change moves starts on the new host from nothing — an
// empty etcd, new CAs — unless the change also restores it (an EtcdRestore of the cluster). Said as
// a warning at the host line, with what to add. Pure.

/** A warning for each hosted cluster the change moves to another host without an EtcdRestore of it. */
export function hostsMovedWithoutRestore(
  base: FleetModel | undefined,
  head: FleetModel,
  headTree: FileTree,
): Problem[] {
  if (!base) return [];
  const before = new Map(base.clusters.map((c) => [c.metadata.name, c.spec.controlPlane?.host]));
  const restored = new Set(head.etcdRestores.map((r) => r.spec.cluster));
  const problems: Problem[] = [];
  for (const cluster of head.clusters) {
    const name = cluster.metadata.name;
    const from = before.get(name);
    const to = cluster.spec.controlPlane?.host;
    if (!from || !to || from === to || restored.has(name)) continue;
    problems.push({
      ...locateInTree(headTree, cluster.origin, ["spec", "controlPlane", "host"]),
      severity: "warning",
      code: "HOST_MOVED_WITHOUT_RESTORE",
      message: `${name}'s control plane moves from ${from} to ${to} with nothing restored: it starts there with an empty etcd and new CAs (kubeconfigs and nodes of ${name} stop working); to bring it back with its data and CAs, add an EtcdRestore of ${name} with backup: latest in the same commit`,
    });
  }
  return problems;
}
