import type { Logger } from "pino";
import { asMap } from "../apimachinery/json.js";
import type { SopsKeyring } from "../credentials/sops-keyring.js";
import { type ClusterHealth, clusterHealthSettings, recordedHealth } from "../failover/cluster-health.js";
import { AgentBranches } from "../git/agent-branches.js";
import { readHeartbeats } from "../git/agent-heartbeat.js";
import type { BackupStores } from "../kube/backup-store-secret.js";
import { type ConnectionSources, MemberCredentials } from "../kube/connections.js";
import type { MemberClientOptions } from "../kube/member-client.js";
import { MemberClientPool } from "../kube/member-clients.js";
import { ClusterProber } from "../kube/prober.js";
import { Syncer } from "../kube/syncer.js";
import type { FleetModel } from "../model/types.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import { clusterStatusPath } from "../status/status-files.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";
import { AutoscalingSampler, DEFAULT_AUTOSCALE_INTERVAL_MS } from "./autoscaling-sampler.js";
import { Controller } from "./controller.js";
import type { Sharding } from "./leadership/sharding.js";
import type { Reconciler } from "./reconciler.js";

export interface SyncingOptions {
  /** Where member credentials are found: --kubeconfig and the environment. */
  readonly connections: ConnectionSources;
  readonly logger: Logger;
  readonly statusIntervalMs: number;
  readonly resyncIntervalMs: number;
  /** Asks the loop for another round when a probe changes a cluster's condition. */
  readonly trigger?: (reason: string) => void;
  readonly client?: MemberClientOptions;
  /** FederatedHPAs sample pods at most this often and change a total at most once per this long (fleet.yaml autoscaleInterval). */
  readonly autoscaleIntervalMs?: number;
  /** Told as each cluster's sync goes through its objects (progress output). */
  readonly onSyncProgress?: (cluster: string, done: number, total: number) => void;
  /** Told each cluster's sync result (metrics). */
  readonly onSyncResult?: (result: ClusterSyncResult) => void;
  /** Milliseconds since the epoch for decisions (CronScale rules, windows); injectable for tests. */
  readonly now?: () => number;
  /** One replica of a sharded controller: it probes and syncs only the members of the shards it holds. */
  readonly sharding?: Sharding;
  /** The age keys that open the fleet's sops-encrypted Secrets at sync (--sops-age-key-file). */
  readonly keyring?: SopsKeyring;
  /** The operator's off-host backup stores (--backup-stores-dir). */
  readonly backupStores?: BackupStores;
}

/**
 * A reconciler made into the push-mode controller: a syncer reaching each member, a prober of their
 * health, and the controller driving them. The prober is started by the caller (a long-running
 * controller), not by a one-off reconcile.
 */
export function syncingController(
  reconciler: Reconciler,
  options: SyncingOptions,
): { syncer: Syncer; controller: Controller; prober: ClusterProber } {
  // One credential cache for the syncer, the prober and the autoscaler: files are read again only when they change.
  const credentials = new MemberCredentials(options.connections);
  const connect = (model: FleetModel) => credentials.resolve(model.clusters);
  // Sharded, the syncer and the prober reach only this replica's members (the autoscaler, which only
  // reads, samples every member for the leader's render).
  const { sharding } = options;
  const own = sharding
    ? async (model: FleetModel) => (await connect(model)).filter((c) => sharding.inScope(model, c.cluster))
    : connect;
  // And one pool of member clients: a client per cluster (and way of asking), made again when its credentials change.
  const clients = new MemberClientPool(options.client);
  const syncer = new Syncer({
    clients,
    connect: own,
    logger: options.logger,
    ...(options.client ? { client: options.client } : {}),
    ...(options.onSyncResult ? { onResult: options.onSyncResult } : {}),
    ...(options.onSyncProgress ? { onProgress: options.onSyncProgress } : {}),
    capacityIntervalMs: options.statusIntervalMs,
    ...(options.now ? { now: options.now } : {}),
    ...(options.keyring ? { keyring: options.keyring } : {}),
    ...(options.backupStores ? { backupStores: options.backupStores } : {}),
  });
  const recorded = new RecordedConditions(reconciler);
  const prober = new ClusterProber({
    clients,
    connect: own,
    model: () => reconciler.snapshot().state.model,
    heartbeats: (model) => readHeartbeats(reconciler.repository, reconciler.statusBranch, model),
    restore: (cluster) => recorded.health(cluster),
    logger: options.logger,
    onChange: () => options.trigger?.("cluster health"),
    ...(options.now ? { now: options.now } : {}),
  });
  const autoscaler = new AutoscalingSampler({
    clients,
    connect,
    logger: options.logger,
    intervalMs: options.autoscaleIntervalMs ?? DEFAULT_AUTOSCALE_INTERVAL_MS,
    ...(options.client ? { client: options.client } : {}),
  });
  const controller = new Controller(reconciler, syncer, {
    autoscaler,
    agents: new AgentBranches(reconciler.repository, reconciler.statusBranch),
    logger: options.logger,
    statusIntervalMs: options.statusIntervalMs,
    resyncIntervalMs: options.resyncIntervalMs,
    prober,
    ...(options.now ? { now: options.now } : {}),
    ...(sharding ? { sharding } : {}),
  });
  return { syncer, controller, prober };
}

/**
 * Each cluster's condition as the status branch records it (status/clusters/<cluster>.yaml's observed
 * block), read again only when that block or the fleet's clusterHealth settings changed: the prober
 * asks for it on every look at a cluster it has not probed since it started.
 */
class RecordedConditions {
  private readonly read = new Map<
    string,
    { block: string; spec: unknown; health: ClusterHealth | undefined }
  >();

  constructor(private readonly reconciler: Reconciler) {}

  health(cluster: string): ClusterHealth | undefined {
    const block = this.reconciler.observedBlock(clusterStatusPath(cluster));
    if (block === undefined) return undefined;
    const spec = this.reconciler.snapshot().state.model?.fleet?.spec;
    const known = this.read.get(cluster);
    if (known?.block === block && known.spec === spec) return known.health;
    let health: ClusterHealth | undefined;
    try {
      health = recordedHealth(
        asMap(asMap(readEmittedYaml(block)).observed).condition,
        clusterHealthSettings(spec),
      );
    } catch {
      health = undefined;
    }
    this.read.set(cluster, { block, spec, health });
    return health;
  }
}
