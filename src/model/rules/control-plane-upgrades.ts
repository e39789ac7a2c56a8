import {
  format,
  type KubeVersion,
  minorDistance,
  parseEtcdVersion,
  parseKubeVersion,
} from "../../apimachinery/kube-version.js";
import { resolveControlPlane } from "../controlplane/hosted-control-plane.js";
import { suggest } from "../schema-problems.js";
import type { ControlPlaneUpgrade } from "../types.js";
import type { RuleContext } from "./rule.js";

/**
 * A ControlPlaneUpgrade must be one Kubernetes can take: its batches name hosted clusters, each at
 * most once across every upgrade, with batch names unique; and its version is at most one minor above
 * each cluster's version otherwise, never a minor below it (a patch back is how an upgrade is undone).
 * An etcd version it gives moves each cluster's dedicated etcd (never a shared one) at most one minor
 * above the class's, never below it, and a minor step up allows no rollback.
 */
export function checkControlPlaneUpgrades(context: RuleContext): void {
  const { model, reporter } = context;
  const claimed = new Map<string, string>();
  const upgrades = [...model.controlPlaneUpgrades].sort((a, b) =>
    a.metadata.name < b.metadata.name ? -1 : 1,
  );
  for (const upgrade of upgrades) {
    const batchNames = new Set<string>();
    upgrade.spec.batches.forEach((batch, b) => {
      if (batchNames.has(batch.name))
        reporter.report({
          origin: upgrade.origin,
          path: ["spec", "batches", b, "name"],
          code: "DUPLICATE_NAME",
          message: `batch "${batch.name}" appears twice in ControlPlaneUpgrade "${upgrade.metadata.name}"; batch names must be unique`,
        });
      batchNames.add(batch.name);
      batch.clusters.forEach((name, c) => {
        checkBatchCluster(context, { upgrade, batch: batch.name, name, index: [b, c] }, claimed);
      });
    });
  }
}

interface BatchCluster {
  readonly upgrade: ControlPlaneUpgrade;
  readonly batch: string;
  readonly name: string;
  /** The batch's and the cluster's index. */
  readonly index: readonly [number, number];
}

// One cluster of a batch: hosted, in no other batch, and able to step to the upgrade's version.
function checkBatchCluster(context: RuleContext, at: BatchCluster, claimed: Map<string, string>): void {
  const { model, reporter } = context;
  const { upgrade, name } = at;
  const path = ["spec", "batches", at.index[0], "clusters", at.index[1]];
  const cluster = model.clusters.find((c) => c.metadata.name === name);
  if (!cluster?.spec.controlPlane) {
    const hosted = model.clusters.filter((c) => c.spec.controlPlane).map((c) => c.metadata.name);
    reporter.report({
      origin: upgrade.origin,
      path,
      code: "UNKNOWN_REFERENCE",
      message: cluster
        ? `cluster "${name}" is not hosted (it has no spec.controlPlane): only hosted control planes are upgraded by gitfleet`
        : `unknown hosted cluster "${name}"${suggest(name, hosted)}`,
    });
    return;
  }
  const earlier = claimed.get(name);
  if (earlier !== undefined) {
    reporter.report({
      origin: upgrade.origin,
      path,
      code: "DUPLICATE_NAME",
      message: `cluster "${name}" is already in upgrade batch ${earlier}; a control plane is in one batch of one upgrade at a time`,
    });
    return;
  }
  claimed.set(name, `${upgrade.metadata.name}/${at.batch}`);
  const classes = new Map(model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  const plane = resolveControlPlane(cluster, classes);
  const from = plane ? parseKubeVersion(plane.apiServer.version) : undefined;
  const target = parseKubeVersion(upgrade.spec.version);
  const why = target && from ? stepProblem(from, target) : undefined;
  if (why)
    reporter.report({
      origin: upgrade.origin,
      path: ["spec", "version"],
      code: "INVALID_FIELD_COMBINATION",
      message: `${upgrade.spec.version} for cluster "${name}", which runs ${plane?.apiServer.version} otherwise: ${why}`,
    });
  if (plane && upgrade.spec.etcd) checkEtcdStep(context, at, plane.etcd, upgrade.spec.etcd.version);
}

// The etcd an upgrade moves with a batch's cluster: dedicated, and a step etcd takes (and undoes).
function checkEtcdStep(
  { reporter }: RuleContext,
  { upgrade, name, index }: BatchCluster,
  etcd: { readonly mode: string; readonly name: string; readonly version: string },
  version: string,
): void {
  if (etcd.mode === "Shared") {
    reporter.report({
      origin: upgrade.origin,
      path: ["spec", "batches", index[0], "clusters", index[1]],
      code: "INVALID_FIELD_COMBINATION",
      message: `cluster "${name}" keeps its data in the shared etcd "${etcd.name}", which the clusters sharing it move together with their class; an upgrade's etcd.version moves dedicated etcds only`,
    });
    return;
  }
  const from = parseEtcdVersion(etcd.version);
  const to = parseEtcdVersion(version);
  if (!from || !to) return;
  const distance = minorDistance(from, to);
  const at = { origin: upgrade.origin, code: "INVALID_FIELD_COMBINATION" } as const;
  const otherwise = `etcd ${version} for cluster "${name}", whose etcd runs ${etcd.version} otherwise`;
  if (distance < 0)
    reporter.report({
      ...at,
      path: ["spec", "etcd", "version"],
      message: `${otherwise}: etcd cannot go back a minor version`,
    });
  else if (distance > 1)
    reporter.report({
      ...at,
      path: ["spec", "etcd", "version"],
      message: `${otherwise}: etcd upgrades one minor version at a time`,
    });
  else if (distance === 1) {
    const rollback = upgrade.spec.batches.findIndex((b) => b.rollback === true);
    const path =
      upgrade.spec.onFailure === "Rollback"
        ? ["spec", "onFailure"]
        : rollback >= 0
          ? ["spec", "batches", rollback, "rollback"]
          : undefined;
    if (path)
      reporter.report({
        ...at,
        path,
        message: `${otherwise}: a minor step of etcd cannot be rolled back (etcd does not go back a minor version; restore from a snapshot instead)`,
      });
  }
}

// Why an API server cannot go from `from` to `to` in one step: more than one minor up, or a minor down.
function stepProblem(from: KubeVersion, to: KubeVersion): string | undefined {
  const distance = minorDistance(from, to);
  if (distance > 1)
    return `kube-apiserver upgrades one minor version at a time (${format(from)} → ${format(to)} skips a minor)`;
  if (distance < 0) return `kube-apiserver cannot go back a minor version (${format(from)} → ${format(to)})`;
  return undefined;
}
