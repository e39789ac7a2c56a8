import { Gauge, type Registry } from "prom-client";
import type { HealthStatus } from "../model/health.js";
import { worstHealth } from "../sync/health.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";

const STATES: readonly HealthStatus[] = ["Healthy", "Progressing", "Unknown", "Missing", "Degraded"];

/**
 * Per app and cluster, what alerts and dashboards ask of the last sync: the app's health there (one
 * series per state, 1 for the one it is in, as kube-state-metrics shows phases), its objects the
 * sync could not apply, and per cluster whether a prune is held past the deletion budget.
 */
export function registerAppMetrics(
  registers: Registry[],
  synced: () => ReadonlyMap<string, ClusterSyncResult>,
): void {
  new Gauge({
    name: "gitfleet_app_health",
    help: "1 for the health an app's objects in a cluster have at worst (Healthy, Progressing, Unknown, Missing, Degraded), 0 for the others, as the last sync read them.",
    labelNames: ["app", "cluster", "health"],
    registers,
    collect() {
      this.reset();
      for (const [cluster, result] of synced())
        for (const [app, objects] of byApp(result)) {
          const health = worstHealth(objects.map((o) => o.health)).status;
          for (const state of STATES) this.set({ app, cluster, health: state }, state === health ? 1 : 0);
        }
    },
  });
  new Gauge({
    name: "gitfleet_app_failed_objects",
    help: "Objects of an app the last sync of a cluster could not apply (failed, or in conflict with another field manager).",
    labelNames: ["app", "cluster"],
    registers,
    collect() {
      this.reset();
      for (const [cluster, result] of synced())
        for (const [app, objects] of byApp(result))
          this.set(
            { app, cluster },
            objects.filter((o) => o.action === "failed" || o.action === "conflict").length,
          );
    },
  });
  new Gauge({
    name: "gitfleet_member_credential_expiry_timestamp_seconds",
    help: "When the credential gitfleet reaches a direct member with stops working (a client certificate's notAfter, a token's exp), as the last sync read it; absent when it does not say.",
    labelNames: ["cluster", "kind"],
    registers,
    collect() {
      this.reset();
      for (const [cluster, result] of synced())
        if (result.credential)
          this.set({ cluster, kind: result.credential.kind }, Date.parse(result.credential.notAfter) / 1000);
    },
  });
  new Gauge({
    name: "gitfleet_cluster_prune_blocked",
    help: "1 while a cluster's deletions exceed the deletion budget and wait for a commit that allows them.",
    labelNames: ["cluster"],
    registers,
    collect() {
      this.reset();
      for (const [cluster, result] of synced()) this.set({ cluster }, result.pruneBlocked ? 1 : 0);
    },
  });
}

function byApp(result: ClusterSyncResult): Map<string, ClusterSyncResult["objects"][number][]> {
  const apps = new Map<string, ClusterSyncResult["objects"][number][]>();
  for (const object of result.objects) apps.set(object.app, [...(apps.get(object.app) ?? []), object]);
  return apps;
}
