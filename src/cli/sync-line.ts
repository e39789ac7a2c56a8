import type { ClusterSyncResult } from "../sync/sync-result.js";

/** One line saying what a cluster's sync did, for `reconcile --once` and `agent --once`. */
export function syncLine(result: ClusterSyncResult): string {
  if (!result.reachable) return `${result.cluster}: not synced (${result.error ?? "no answer"})`;
  const count = (action: string) => result.objects.filter((o) => o.action === action).length;
  const parts = [
    `${result.objects.length} objects`,
    `${count("created")} created`,
    `${count("configured") + count("corrected")} updated`,
    `${result.pruned.filter((p) => p.outcome === "deleted").length} pruned`,
    ...(count("conflict") ? [`${count("conflict")} conflicts`] : []),
    ...(count("failed") ? [`${count("failed")} failed`] : []),
    ...(result.pruneBlocked
      ? [`prune blocked: ${result.pruneBlocked.reasons.join("; ")} (allow with ${result.pruneBlocked.token})`]
      : []),
  ];
  return `${result.cluster}: ${parts.join(", ")}`;
}

/** A sync that left something undone: unreachable, or an object that failed or conflicted. */
export function syncFailed(result: ClusterSyncResult): boolean {
  return !result.reachable || result.objects.some((o) => o.action === "failed" || o.action === "conflict");
}
