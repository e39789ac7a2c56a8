import {
  format,
  type KubeVersion,
  minorDistance,
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
}

// Why an API server cannot go from `from` to `to` in one step: more than one minor up, or a minor down.
function stepProblem(from: KubeVersion, to: KubeVersion): string | undefined {
  const distance = minorDistance(from, to);
  if (distance > 1)
    return `kube-apiserver upgrades one minor version at a time (${format(from)} → ${format(to)} skips a minor)`;
  if (distance < 0) return `kube-apiserver cannot go back a minor version (${format(from)} → ${format(to)})`;
  return undefined;
}
