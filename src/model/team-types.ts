import type { ClusterAffinity, FleetObject } from "./fleet-object.js";

// The team kind (teams/<name>.yaml). Types only.

/** An application team: the files it owns and the bounds they stay within (Argo CD's AppProject). */
export type Team = FleetObject<
  "Team",
  {
    readonly paths: readonly string[];
    readonly owners: readonly string[];
    readonly namespaces?: readonly string[];
    readonly clusters?: ClusterAffinity;
    readonly namespacedKinds?: readonly string[];
    readonly clusterScopedKinds?: readonly string[];
    readonly selectOutside?: boolean;
  }
>;
