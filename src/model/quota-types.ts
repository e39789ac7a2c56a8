import type { FleetObject } from "./fleet-object.js";

// The fleet quota kind (quotas/<name>.yaml). Types only.

/** Resource name → quantity, as a ResourceQuota's spec.hard writes it. */
export type QuotaList = Readonly<Record<string, string | number>>;

/** One cluster's limits for the quota's namespace. */
export interface StaticAssignment {
  readonly clusterName: string;
  readonly hard: QuotaList;
}

/**
 * Limits on what one namespace's workloads request across the fleet (Karmada's
 * FederatedResourceQuota): overall, and optionally per cluster.
 */
export type FederatedResourceQuota = FleetObject<
  "FederatedResourceQuota",
  { readonly overall: QuotaList; readonly staticAssignments?: readonly StaticAssignment[] }
>;
