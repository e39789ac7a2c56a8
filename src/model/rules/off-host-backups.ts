import type { RuleContext } from "./rule.js";

/**
 * Off-host backups pack one cluster's snapshot with that cluster's PKI. A shared etcd's snapshot holds
 * every cluster in it, and its backup Job runs in the shared etcd's namespace, where no cluster's PKI
 * is: a hosted cluster of a shared etcd whose class asks for off-host backups is refused.
 */
export function checkOffHostBackups(context: RuleContext): void {
  const classes = new Map(context.model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  for (const cluster of context.model.clusters) {
    const controlPlane = cluster.spec.controlPlane;
    if (controlPlane?.etcd?.mode !== "Shared") continue;
    const found = classes.get(controlPlane.class);
    const offHost = found?.spec.etcd.backup?.offHost;
    if (!offHost) continue;
    context.reporter.report({
      origin: cluster.origin,
      path: ["spec", "controlPlane", "etcd", "mode"],
      code: "INVALID_FIELD_COMBINATION",
      message: `${cluster.metadata.name} keeps its data in a shared etcd, but class ${controlPlane.class} sends backups to store ${offHost.store}: off-host backups cover dedicated etcds only (a shared etcd's snapshot holds every cluster in it)`,
    });
  }
}

/**
 * Pruning snapshots to `etcd.backup.keep` deletes files in the backup volume, which the etcd image
 * (no shell) cannot: it runs in gitfleet's image, the class's `backup.image` or its push's. A class
 * that keeps a count with neither is refused at `keep`.
 */
export function checkBackupRetention(context: RuleContext): void {
  for (const found of context.model.controlPlaneClasses) {
    const backup = found.spec.etcd.backup;
    if (backup?.keep === undefined || backup.image !== undefined || backup.offHost !== undefined) continue;
    context.reporter.report({
      origin: found.origin,
      path: ["spec", "etcd", "backup", "keep"],
      code: "INVALID_FIELD_COMBINATION",
      message: `keeping ${backup.keep} snapshots needs gitfleet's image to delete the older ones (the etcd image has no shell): set etcd.backup.image, or offHost`,
    });
  }
}
