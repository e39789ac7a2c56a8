import type { ObjectInterpreterLookup } from "../model/interpreter-index.js";
import type { ClusterCapacity } from "../model/node-capacity.js";
import type { ServedApis } from "../model/served-apis.js";
import type { StateRule } from "../model/state-preservation.js";
import type { CountedWorkload } from "../sync/cluster-capacity.js";
import type { DesiredObject } from "../sync/desired-objects.js";
import type { Inventory } from "../sync/inventory.js";
import type { PruneSettings } from "../sync/prune-plan.js";
import type { Hold } from "../sync/sync-result.js";
import type { MemberClient } from "./member-client.js";
/** What one cluster's sync takes: the member, the objects it should hold, the prune settings, the inventory the status branch knows. */
export interface ClusterSyncInput {
  readonly cluster: string;
  readonly client: MemberClient;
  readonly sourceCommit: string;
  readonly desired: readonly DesiredObject[];
  readonly prune: PruneSettings;
  /** The inventory on the status branch: used when the member's own copy is missing. */
  readonly knownInventory: Inventory;
  /** The ResourceInterpreter for a custom kind (health, replicas). */
  readonly interpreterFor?: ObjectInterpreterLookup;
  /** A workload's statePreservation rules, by identity (what its failover would carry elsewhere). */
  readonly stateRulesFor?: (identity: string) => readonly StateRule[];
  /** Requests in flight per cluster (default 8). */
  readonly concurrency?: number;
  /** How long to wait for applied CRDs to be Established (default 30 s). */
  readonly crdTimeoutMs?: number;
  /** Reads the member's capacity after the sync (default: list its nodes and pods every time). */
  readonly capacity?: (
    client: MemberClient,
    workloads: readonly CountedWorkload[],
  ) => Promise<ClusterCapacity | undefined>;
  /** Reads what the member serves after the sync; `fresh` when this sync applied CRDs. */
  readonly served?: (client: MemberClient, fresh: boolean) => Promise<ServedApis | undefined>;
  /** Told after each object is applied or compared (progress of a large sync). */
  readonly onObject?: (done: number, total: number) => void;
  /** Apps whose current rendering waits for the rollout to reach this cluster, and why: they keep what they run. */
  readonly held?: ReadonlyMap<string, Hold>;
  /** Per app, the apps that must stand Healthy in this cluster at their rendering before it syncs. */
  readonly dependsOn?: ReadonlyMap<string, readonly string[]>;
  /** Single objects left as they run, by identity, and why (a hosted control plane's order of upgrade). */
  readonly heldObjects?: ReadonlyMap<string, Hold>;
  /**
   * Only these apps are synced (sync/sync-scope.ts): `desired` holds their objects alone, each is
   * read by itself rather than listed with its kind, and the other apps' inventory entries are kept.
   */
  readonly scope?: ReadonlySet<string>;
}
