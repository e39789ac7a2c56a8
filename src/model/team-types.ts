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
    readonly source?: TeamSource;
  }
>;

/** A team's own repository, pinned from the fleet repo: its files under `path` laid over the fleet's root. */
export interface TeamSource {
  readonly url: string;
  /** A full commit id. */
  readonly commit: string;
  readonly path?: string;
}
