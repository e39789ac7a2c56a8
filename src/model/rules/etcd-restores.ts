import { resolveControlPlane } from "../controlplane/hosted-control-plane.js";
import { suggest } from "../schema-problems.js";
import type { ControlPlaneClass, EtcdRestore } from "../types.js";
import type { RuleContext } from "./rule.js";

/**
 * The longest restore name: its Job is etcd-restore-<name> (a replicated etcd's, one per member,
 * etcd-restore-<name>-<ordinal>), at most 63 characters.
 */
const MAX_NAME = 63 - "etcd-restore-".length;
const MAX_REPLICATED_NAME = MAX_NAME - "-0".length;

/**
 * An EtcdRestore must name a hosted cluster whose etcd gitfleet can restore — dedicated — and be
 * the only restore of that cluster in the repo; its name leaves room for its Jobs'.
 */
export function checkEtcdRestores(context: RuleContext): void {
  const seen = new Map<string, EtcdRestore>();
  const classes = new Map(context.model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  for (const restore of context.model.etcdRestores) {
    checkName(context, restore, classes);
    const source = sourceProblem(context, restore);
    if (source) context.reporter.report({ origin: restore.origin, ...source });
    const why = unrestorable(context, restore);
    if (why) {
      context.reporter.report({ origin: restore.origin, path: ["spec", "cluster"], ...why });
      continue;
    }
    const earlier = seen.get(restore.spec.cluster);
    if (earlier)
      context.reporter.report({
        origin: restore.origin,
        path: ["spec", "cluster"],
        code: "DUPLICATE_NAME",
        message: `${restore.spec.cluster} already has EtcdRestore "${earlier.metadata.name}" at ${context.reporter.where(earlier.origin, ["spec", "cluster"])}; remove the one that ran before adding another`,
      });
    seen.set(restore.spec.cluster, restore);
  }
}

// A name that leaves its Jobs room: etcd-restore-<name>, -<ordinal> more for a replicated etcd.
function checkName(
  context: RuleContext,
  restore: EtcdRestore,
  classes: ReadonlyMap<string, ControlPlaneClass>,
): void {
  const cluster = context.model.clusters.find((c) => c.metadata.name === restore.spec.cluster);
  const replicated = (cluster ? (resolveControlPlane(cluster, classes)?.etcd.replicas ?? 1) : 1) > 1;
  const max = replicated ? MAX_REPLICATED_NAME : MAX_NAME;
  if (restore.metadata.name.length > max)
    context.reporter.report({
      origin: restore.origin,
      path: ["metadata", "name"],
      code: "INVALID_NAME",
      message: replicated
        ? `an EtcdRestore of a replicated etcd has a name of at most ${max} characters (its Jobs are etcd-restore-<name>-<ordinal>)`
        : `an EtcdRestore's name is at most ${max} characters (its Job is etcd-restore-<name>)`,
    });
}

// Exactly one of snapshot and backup; a backup only of a cluster whose class sends backups off the host.
function sourceProblem(
  { model }: RuleContext,
  restore: EtcdRestore,
): { path: string[]; code: "INVALID_FIELD_COMBINATION" | "MISSING_FIELD"; message: string } | undefined {
  const { snapshot, backup } = restore.spec;
  if (snapshot !== undefined && backup !== undefined)
    return {
      path: ["spec", "backup"],
      code: "INVALID_FIELD_COMBINATION",
      message:
        "an EtcdRestore restores from a snapshot in the host's backup volume or from an off-host backup, not both: remove snapshot or backup",
    };
  if (snapshot === undefined && backup === undefined)
    return {
      path: ["spec"],
      code: "MISSING_FIELD",
      message:
        "an EtcdRestore needs snapshot (a file in the host's backup volume) or backup (latest, or a key gitfleet backup list prints)",
    };
  if (backup === undefined) return undefined;
  const cluster = model.clusters.find((c) => c.metadata.name === restore.spec.cluster);
  const classes = new Map(model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  const plane = cluster ? resolveControlPlane(cluster, classes) : undefined;
  if (plane?.etcd.mode === "Dedicated" && !plane.etcd.backup.offHost)
    return {
      path: ["spec", "backup"],
      code: "INVALID_FIELD_COMBINATION",
      message: `${restore.spec.cluster}'s class ${cluster?.spec.controlPlane?.class ?? ""} sends no backup off the host (etcd.backup.offHost): restore a snapshot of its backup volume instead`,
    };
  return undefined;
}

function unrestorable(
  { model }: RuleContext,
  restore: EtcdRestore,
): { code: "UNKNOWN_REFERENCE" | "INVALID_FIELD_COMBINATION"; message: string } | undefined {
  const name = restore.spec.cluster;
  const cluster = model.clusters.find((c) => c.metadata.name === name);
  if (!cluster?.spec.controlPlane) {
    const hosted = model.clusters.filter((c) => c.spec.controlPlane).map((c) => c.metadata.name);
    return {
      code: "UNKNOWN_REFERENCE",
      message: cluster
        ? `cluster "${name}" is not hosted: gitfleet restores only the etcd of a control plane it runs`
        : `unknown hosted cluster "${name}"${suggest(name, hosted)}`,
    };
  }
  const classes = new Map(model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  const plane = resolveControlPlane(cluster, classes);
  if (plane?.etcd.mode === "Shared")
    return {
      code: "INVALID_FIELD_COMBINATION",
      message: `${name} keeps its data in the shared etcd ${plane.etcd.name}: restoring a shared etcd would roll back every cluster in it, which gitfleet does not do`,
    };
  return undefined;
}
