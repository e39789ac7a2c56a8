import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { asMap } from "../apimachinery/json.js";
import type { SopsKeyring } from "../credentials/sops-keyring.js";
import type { Gate } from "../migrate/migration-state.js";
import { indexObjectInterpreters } from "../model/interpreter-index.js";
import { oneLine } from "../model/one-line.js";
import { type StateRule, stateRules } from "../model/state-preservation.js";
import type { FleetModel, HostedPlaneStates } from "../model/types.js";
import type { RenderedObject, WorkloadDecision } from "../render/render-result.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import {
  AGENT_STATUS_CONFIGMAP,
  type AgentReport,
  readAgentReport,
  sanitizeAgentReport,
} from "../status/observed-status.js";
import { controlPlaneHolds } from "../sync/control-plane-order.js";
import type { DesiredObject } from "../sync/desired-objects.js";
import { desiredByCluster, pruneSettings } from "../sync/desired-objects.js";
import { INVENTORY_NAMESPACE, type Inventory } from "../sync/inventory.js";
import { applyGates } from "../sync/migration-gates.js";
import { RolloutPlanner } from "../sync/rollout-planner.js";
import type { OpenedSecrets } from "../sync/sealed-secrets.js";
import { addControlHolds, controlHolds, dependenciesOf, failoverHere } from "../sync/sync-controls.js";
import type { ClusterSyncResult, Hold } from "../sync/sync-result.js";
import { changedApps, type SyncedSet, syncedSet, withOtherApps } from "../sync/sync-scope.js";
import type { BackupStores } from "./backup-store-secret.js";
import { notSynced, syncCluster } from "./cluster-sync.js";
import { connectionKey, type MemberConnection } from "./connections.js";
import { detachApp } from "./detach-app.js";
import { keepHostedEtcds } from "./etcd-members.js";
import { readEtcdRollouts } from "./etcd-rollouts.js";
import { ensureHostedCredentials, planesHostedBy } from "./hosted-credentials.js";
import type { MemberClient, MemberClientOptions } from "./member-client.js";
import { MemberClientPool } from "./member-clients.js";
import { openSecrets } from "./open-secrets.js";
import { CapacityReadings } from "./read-capacity.js";
import { SERVED_APIS_INTERVAL_MS, ServedApiReadings } from "./read-served-apis.js";
import { ensureTeamAccess } from "./team-access.js";

/** What the members should hold: the status branch's rendered tree and the fleet it came from. */
export interface SyncTarget {
  /** The rendered (valid) source commit. */
  readonly sourceCommit: string;
  readonly model: FleetModel;
  /** The hosted control planes' states the model was generated with (upgrade versions, restores). */
  readonly planes?: HostedPlaneStates;
  readonly objects: readonly RenderedObject[];
  /** Per cluster, the inventory the status branch holds (used when a member lost its own). */
  readonly inventories: ReadonlyMap<string, Inventory>;
  /** The render's workload decisions: what failover moved decides what may be pruned beyond the budget. */
  readonly decisions?: readonly WorkloadDecision[];
  /** Per cluster, what migrations allow for their apps: apply (adopting), leave alone, or detach. */
  readonly gates?: ReadonlyMap<string, ReadonlyMap<string, Gate>>;
  /** Per cluster, the Kubernetes version the status branch recorded (the order of hosted control planes reads it until a sync). */
  readonly recordedVersions?: ReadonlyMap<string, string>;
  /** Sharded: the last results of members other replicas sync — an app's rollout counts its clusters everywhere. */
  readonly elsewhere?: ReadonlyMap<string, ClusterSyncResult>;
  /** Asked for by a new render alone: a member synced completely since takes only the apps that changed (sync/sync-scope.ts). */
  readonly changesOnly?: boolean;
}

export interface SyncerOptions {
  /** How to reach each cluster of a fleet (push with a client configuration, pull, or why not). */
  readonly connect: (model: FleetModel) => Promise<readonly MemberConnection[]>;
  readonly logger: Logger;
  readonly client?: MemberClientOptions;
  /** Where its member clients come from (shared with the prober and the autoscaler); default its own. */
  readonly clients?: MemberClientPool;
  /** Requests in flight per cluster. */
  readonly concurrency?: number;
  /** A member's capacity (its nodes and pods listed) is read at most once per this many milliseconds. */
  readonly capacityIntervalMs?: number;
  /** Clusters synced at once (default 16): the others wait their turn in their own queues. */
  readonly maxClusters?: number;
  /** Gate changes by each app's rollout (Serial, Parallel with maxUnavailableClusters); default true. */
  readonly rollout?: boolean;
  /** The clock rollouts and sync windows read (default Date.now). */
  readonly now?: () => number;
  /** The age keys that open the fleet's sops-encrypted Secrets; without them none is applied (each is reported). */
  readonly keyring?: SopsKeyring;
  /** The operator's off-host backup stores (--backup-stores-dir), copied into hosts for their backup Jobs. */
  readonly backupStores?: BackupStores;
  /** Called with every cluster's result as it comes. */
  readonly onResult?: (result: ClusterSyncResult) => void;
  /** Told as each cluster's sync goes through its objects: how many of how many (progress output). */
  readonly onProgress?: (cluster: string, done: number, total: number) => void;
}

/**
 * Push-mode sync: one worker per member cluster, each with its own queue, so a slow or dead cluster
 * never holds up the others. A new target replaces whatever a worker has not started yet (a newer
 * commit supersedes an older one); a sync in flight finishes first. Pull-mode clusters are left to
 * their agents.
 */
export class Syncer {
  private readonly workers = new Map<string, ClusterWorker>();
  private readonly results = new Map<string, ClusterSyncResult>();
  /** Per member, what its last complete sync left (undefined until one completes, or after one that did not). */
  private readonly synced = new Map<string, SyncedSet>();
  /** Each member's Kubernetes version as its last sync that reached it read it. */
  private readonly versions = new Map<string, string>();
  private readonly capacities = new CapacityReadings();
  private readonly servedApis = new ServedApiReadings();
  private readonly rollout = new RolloutPlanner();
  private readonly reports = new Map<string, AgentReport>();
  private readonly reading = new Set<Promise<void>>();
  private readonly slots: Slots;
  private generation = 0;
  private readonly clients: MemberClientPool;

  constructor(private readonly options: SyncerOptions) {
    this.slots = new Slots(options.maxClusters ?? 16);
    this.clients = options.clients ?? new MemberClientPool(options.client);
  }

  /**
   * Queues a sync of every push-mode cluster to the target, once the members' credentials are read
   * and the fleet's sops-encrypted Secrets opened (idle() waits for that too). A newer request supersedes one whose credentials are still being read.
   */
  request(target: SyncTarget): Promise<void> {
    const generation = ++this.generation;
    const queued = Promise.all([
      this.options.connect(target.model),
      openSecrets(target.model, this.options.keyring),
    ])
      .then(([connections, opened]) => {
        if (generation === this.generation) this.enqueue(target, connections, opened);
      })
      .finally(() => this.reading.delete(queued));
    this.reading.add(queued);
    return queued;
  }

  private enqueue(target: SyncTarget, connections: readonly MemberConnection[], opened: OpenedSecrets): void {
    const desired = desiredByCluster(target.objects, target.model, opened);
    const prune = pruneSettings(target.model, target.decisions);
    const interpreterFor = indexObjectInterpreters(target.model);
    const stateRulesFor = stateRulesByWorkload(target.model, target.decisions ?? []);
    // Each app's rollout decides which clusters take its current rendering in this round.
    const { holds } =
      this.options.rollout === false
        ? { holds: new Map<string, Map<string, string>>() }
        : this.rollout.plan(
            desired,
            target.model,
            target.elsewhere ? new Map([...target.elsewhere, ...this.results]) : this.results,
            this.now(),
            passedOver(target.decisions ?? [], target.gates),
          );
    const syncedAs = (cluster: string) => ({ cluster, sourceCommit: target.sourceCommit });
    const dependsOn = dependenciesOf(target.model);
    const inventoryOf = (cluster: string) => target.inventories.get(cluster) ?? new Map();
    for (const connection of connections) {
      const { cluster } = connection;
      if (connection.mode === "pull") {
        if (connection.config) this.readReport(cluster, connection.config, target.model);
        continue;
      }
      if ("error" in connection) {
        this.record(notSynced(syncedAs(cluster), `no connection: ${connection.error}`, inventoryOf(cluster)));
        continue;
      }
      const worker = this.worker(cluster, connection);
      const gated = applyGates(desired.get(cluster) ?? [], holds.get(cluster), target.gates?.get(cluster));
      const controls = controlHolds(target.model, cluster, gated.desired, this.now(), (app) =>
        failoverHere(target.decisions ?? [], this.results.get(cluster)?.inventory, app),
      );
      addControlHolds(gated.held, controls.apps);
      const job: MemberJob = {
        ...{ target, cluster, worker, gated, controls, prune, interpreterFor, dependsOn },
        stateRulesFor,
      };
      worker.enqueue(() =>
        this.syncMember(job).catch((error: unknown) =>
          notSynced(
            syncedAs(cluster),
            `sync failed: ${oneLine(error instanceof Error ? error.message : String(error))}`,
            inventoryOf(cluster),
          ),
        ),
      );
    }
  }

  // One member's sync of a target, as its worker runs it.
  private async syncMember(job: MemberJob): Promise<ClusterSyncResult> {
    const { target, cluster, worker, gated, controls, dependsOn } = job;
    const knownInventory = target.inventories.get(cluster) ?? new Map();
    // Apps a migration rolled back or dropped are detached first: labels and inventory entries
    // go, the objects keep running, and the sync leaves them alone (they are held).
    for (const app of gated.detach)
      await detachApp({
        cluster,
        client: worker.client,
        app,
        sourceCommit: target.sourceCommit,
        knownInventory,
      });
    // Decided as the job runs, after the sync before it: what that one left is what changed from.
    const previous = this.results.get(cluster);
    const scope =
      target.changesOnly && previous?.reachable ? this.scopeOf(cluster, gated.desired, dependsOn) : undefined;
    // Teams' objects are applied as their teams: their accounts and RBAC first.
    await ensureTeamAccess(worker.client, target.model, gated.desired, this.options.logger);
    const synced = await syncCluster({
      cluster,
      client: worker.client,
      sourceCommit: target.sourceCommit,
      desired: scope ? gated.desired.filter((d) => scope.has(d.app)) : gated.desired,
      ...(scope ? { scope } : {}),
      prune: job.prune,
      knownInventory,
      interpreterFor: job.interpreterFor,
      stateRulesFor: job.stateRulesFor,
      held: gated.held,
      heldObjects: new Map([...(await this.controlPlaneOrder(target, worker.client)), ...controls.objects]),
      dependsOn,
      ...(this.options.concurrency ? { concurrency: this.options.concurrency } : {}),
      ...(this.options.onProgress ? { onObject: this.progressOf(cluster) } : {}),
      capacity: (client, workloads) =>
        this.capacities.read(client, this.options.capacityIntervalMs ?? 0, workloads),
      served: (client, fresh) => this.servedApis.read(client, SERVED_APIS_INTERVAL_MS, fresh),
    });
    const whole = scope && previous ? withOtherApps(synced, previous, scope) : synced;
    this.remember(cluster, gated.desired, whole);
    // A direct member's own credential (a hosted cluster's are its host's to report).
    const direct = !target.model.clusters.find((c) => c.metadata.name === cluster)?.spec.controlPlane;
    const credential = direct ? worker.client.credential(this.now()) : undefined;
    return withHostedCredentials(
      credential ? { ...whole, credential } : whole,
      worker.client,
      target,
      this.options.backupStores,
    );
  }

  // The apps a sync for a new render takes in a member whose last sync was complete; undefined: all.
  private scopeOf(
    cluster: string,
    desired: readonly DesiredObject[],
    dependsOn: ReadonlyMap<string, readonly string[]>,
  ): Set<string> | undefined {
    const synced = this.synced.get(cluster);
    return synced ? changedApps(synced, desired, dependsOn) : undefined;
  }

  private remember(cluster: string, desired: readonly DesiredObject[], result: ClusterSyncResult): void {
    const set = syncedSet(desired, result);
    if (set) this.synced.set(cluster, set);
    else this.synced.delete(cluster);
  }

  // The holds that order a host's control planes — its etcds as it reports them now, and each hosted
  // cluster's /version as last synced (or, before its first sync since a start, as recorded) — and a
  // hosted cluster's kube-proxy, by its own /version.
  private async controlPlaneOrder(target: SyncTarget, client: MemberClient): Promise<Map<string, Hold>> {
    const hosts = planesHostedBy(target.model, client.cluster, target.planes).length > 0;
    const hosted = target.model.clusters.some(
      (c) => c.metadata.name === client.cluster && c.spec.controlPlane,
    );
    if (!hosts && !hosted) return new Map();
    const etcds = hosts ? await readEtcdRollouts(client, target.model, target.planes) : new Map();
    const observed = {
      version: (c: string) => this.versions.get(c) ?? target.recordedVersions?.get(c),
      etcd: (namespace: string, name: string) => etcds.get(`${namespace}/${name}`),
    };
    return controlPlaneHolds(target.model, client.cluster, observed, target.planes);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private progressOf(cluster: string): (done: number, total: number) => void {
    const report = this.options.onProgress;
    return (done, total) => report?.(cluster, done, total);
  }

  /** What pull-mode agents keep in their own clusters, read where the controller may (by cluster). */
  agentReports(): ReadonlyMap<string, AgentReport> {
    return this.reports;
  }

  // Reads a pull-mode agent's report from its ConfigMap, for agents that cannot push to the repo.
  private readReport(cluster: string, config: KubeConfig, model: FleetModel): void {
    const client = this.clients.client(cluster, config, { retries: 0 });
    const read = client
      .get({
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: INVENTORY_NAMESPACE,
        name: AGENT_STATUS_CONFIGMAP,
      })
      .then((configMap) => {
        const report = configMap
          ? readAgentReport(readEmittedYaml(String(asMap(configMap.data).report ?? "")))
          : undefined;
        if (report?.cluster === cluster) this.reports.set(cluster, sanitizeAgentReport(report, model));
      })
      .catch((error: unknown) =>
        this.options.logger.debug({ cluster, err: error }, "agent report not readable"),
      )
      .finally(() => this.reading.delete(read));
    this.reading.add(read);
  }

  /** The latest result per cluster. */
  latest(): ReadonlyMap<string, ClusterSyncResult> {
    return this.results;
  }

  /** True while a worker has a sync running or queued. */
  get busy(): boolean {
    return this.reading.size > 0 || [...this.workers.values()].some((w) => w.busy);
  }

  /** Waits until every worker is idle. */
  async idle(): Promise<void> {
    while (this.busy)
      await Promise.all([...this.reading, ...[...this.workers.values()].map((w) => w.idle())]);
  }

  private worker(cluster: string, connection: Extract<MemberConnection, { config: unknown }>): ClusterWorker {
    const key = connectionKey(connection);
    let worker = this.workers.get(cluster);
    if (!worker || worker.key !== key) {
      // Another connection may be another member: nothing is known of what it holds.
      this.synced.delete(cluster);
      worker = new ClusterWorker(
        key,
        this.clients.client(cluster, connection.config),
        (result) => this.record(result),
        this.slots,
      );
      this.workers.set(cluster, worker);
    }
    return worker;
  }

  private record(result: ClusterSyncResult): void {
    this.results.set(result.cluster, result);
    // A member not synced this time (unreachable, no connection, a failure) is synced whole next time.
    if (!result.reachable) this.synced.delete(result.cluster);
    if (result.version) this.versions.set(result.cluster, result.version);
    const log = this.options.logger;
    if (!result.reachable) log.warn({ cluster: result.cluster, error: result.error }, "cluster not synced");
    else
      log.info(
        {
          cluster: result.cluster,
          sourceCommit: result.sourceCommit,
          objects: result.objects.length,
          applied: result.objects.filter((o) => !["unchanged", "drifted"].includes(o.action)).length,
          pruned: result.pruned.length,
          ...(result.pruneBlocked ? { pruneBlocked: result.pruneBlocked.token } : {}),
        },
        "cluster synced",
      );
    this.options.onResult?.(result);
  }
}

/** What one member's sync of a target takes, gathered as the target is queued. */
interface MemberJob {
  readonly target: SyncTarget;
  readonly cluster: string;
  readonly worker: ClusterWorker;
  readonly gated: ReturnType<typeof applyGates>;
  readonly controls: ReturnType<typeof controlHolds>;
  readonly prune: ReturnType<typeof pruneSettings>;
  readonly interpreterFor: ReturnType<typeof indexObjectInterpreters>;
  readonly stateRulesFor: (identity: string) => readonly StateRule[];
  readonly dependsOn: ReturnType<typeof dependenciesOf>;
}

/** One cluster's queue: at most one sync running and one waiting (the newest). */
class ClusterWorker {
  private pending: (() => Promise<ClusterSyncResult>) | undefined;
  private running: Promise<void> | undefined;

  constructor(
    readonly key: string,
    readonly client: MemberClient,
    private readonly done: (result: ClusterSyncResult) => void,
    private readonly slots: Slots,
  ) {}

  get busy(): boolean {
    return this.running !== undefined;
  }

  enqueue(job: () => Promise<ClusterSyncResult>): void {
    this.pending = job;
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  async idle(): Promise<void> {
    await this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending) {
      await this.slots.take();
      // The newest job at the moment a slot frees up is the one that runs.
      const job = this.pending;
      this.pending = undefined;
      try {
        if (job) this.done(await job());
      } finally {
        this.slots.give();
      }
    }
  }
}

// A host: the control planes it runs get their credentials once the sync made their namespaces.
async function withHostedCredentials(
  synced: ClusterSyncResult,
  client: MemberClient,
  { model, planes }: SyncTarget,
  stores: BackupStores | undefined,
): Promise<ClusterSyncResult> {
  const hosted = planesHostedBy(model, synced.cluster, planes);
  if (!synced.reachable || hosted.length === 0) return synced;
  const passed = await ensureHostedCredentials(client, model, Date.now(), planes, stores);
  const etcds = await keepHostedEtcds(client, hosted, Date.now(), model.etcdMemberReplacements);
  const credentials = Object.fromEntries(
    Object.entries(passed).map(([cluster, entry]) => {
      const etcd = etcds.get(cluster);
      return [cluster, etcd && !("error" in entry) ? { ...entry, etcd } : entry];
    }),
  );
  // A node pool upgrading or repairing, a serving CSR asked for lately and still pending, or an etcd
  // member NotReady or being replaced, is looked at again soon, not at the next drift resync.
  const moving = Object.values(credentials).some(
    (entry) =>
      !("error" in entry) &&
      ((entry.nodePools ?? []).some((pool) => pool.moving) ||
        (entry.servingCsrs ?? []).some((c) => c.recent) ||
        entry.etcd?.moving === true),
  );
  return { ...synced, credentials, ...(moving ? { waiting: true } : {}) };
}

/** A counting semaphore: at most `size` holders at once, the others served in order. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = Math.max(1, size);
  }

  take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

// Per app, the clusters its rollout does not wait for: those failover is moving it off (old replicas
// kept there, or capacity capped), and those a migration holds it back from or detaches it in.
function passedOver(
  decisions: readonly WorkloadDecision[],
  gates: ReadonlyMap<string, ReadonlyMap<string, Gate>> | undefined,
): Map<string, Set<string>> {
  const apps = new Map<string, Set<string>>();
  const add = (app: string, cluster: string) => {
    const set = apps.get(app) ?? new Set<string>();
    set.add(cluster);
    apps.set(app, set);
  };
  for (const [cluster, byApp] of gates ?? [])
    for (const [app, gate] of byApp) if (gate.action !== "sync") add(app, cluster);
  for (const d of decisions)
    for (const k of [...(d.failover?.keeping ?? []), ...(d.failover?.capped ?? [])]) add(d.app, k.cluster);
  return apps;
}

// Each workload's statePreservation rules, from the Placement its decision names.
function stateRulesByWorkload(
  model: FleetModel,
  decisions: readonly WorkloadDecision[],
): (identity: string) => readonly StateRule[] {
  const byPlacement = new Map(model.placements.map((p) => [p.metadata.name, stateRules(p.spec)]));
  const byWorkload = new Map<string, readonly StateRule[]>();
  for (const decision of decisions) {
    const rules = byPlacement.get(decision.placement) ?? [];
    if (rules.length > 0) byWorkload.set(decision.identity, rules);
  }
  return (identity) => byWorkload.get(identity) ?? [];
}
