import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { parseGitVersion } from "../apimachinery/kube-version.js";
import type { UpgradeStatus } from "../migrate/control-plane-upgrade.js";
import type { MigrationStatus } from "../migrate/migration-state.js";
import { compareStrings } from "../model/file-tree.js";
import { type NodePool, readCapacityRecord } from "../model/node-capacity.js";
import { oneLine } from "../model/one-line.js";
import { type ServiceView, serviceLine } from "../render/service-discovery/service-views.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import { UPGRADES_DIRECTORY } from "../status/layout.js";
import { readMigrationStatus } from "../status/migration-file.js";
import { HOLD_KEYS } from "../status/observed-status.js";
import { appStatusFiles } from "../status/status-files.js";
import { readUpgradeStatus } from "../status/upgrade-file.js";

// What the dashboard, the JSON API and `gitfleet status` show: the status branch's files read into
// one view of the fleet. A function of the files (and the Cluster files of the rendered commit), so
// every view of the same status commit says the same thing.

/** A cluster's facts from its Cluster file in the fleet repo. */
export interface ClusterFacts {
  readonly name: string;
  readonly provider?: string;
  readonly region?: string;
  readonly zone?: string;
  readonly mode: "push" | "pull" | "hosted";
  /** For a hosted cluster: the cluster that runs its control plane. */
  readonly host?: string;
  readonly unschedulable: boolean;
  readonly labels: Readonly<Record<string, string>>;
}

/** One resource's capacity: what Ready nodes offer and what bound pods request. */
export interface CapacityUse {
  readonly allocatable: number;
  readonly requested: number;
}

/** How a cluster is doing, worst first: the order `gitfleet status` and the dashboard sort by. */
export const CLUSTER_STATES = [
  "Unreachable",
  "NotReady",
  "Degraded",
  "Progressing",
  "Unknown",
  "Healthy",
] as const;
export type ClusterState = (typeof CLUSTER_STATES)[number];

export interface ClusterView extends ClusterFacts {
  readonly state: ClusterState;
  /** Why it is not Healthy, when it is not. */
  readonly reason?: string;
  /** The probes' condition (push-mode clusters the controller reaches). */
  readonly condition?: {
    readonly ready: boolean;
    readonly reason?: string;
    readonly since?: string;
    readonly taints: readonly string[];
  };
  /** The Kubernetes version the member reported at its last sync. */
  readonly version?: string;
  /** When the credential gitfleet reaches the member with stops working, as its last sync read it. */
  readonly credential?: {
    readonly kind: "client-certificate" | "token";
    readonly notAfter: string;
    readonly expiring: boolean;
  };
  /** A hosted cluster's control plane: its host, and each component's health as the host's last sync saw it. */
  readonly controlPlane?: {
    readonly host: string;
    readonly components: Readonly<Record<string, string>>;
  };
  /** Objects gitfleet renders for it, and per app. */
  readonly objects: number;
  readonly apps: Readonly<Record<string, number>>;
  /** The last sync: objects by health, the source commit it runs, problems. */
  readonly synced?: {
    readonly reachable: boolean;
    readonly commit?: string;
    readonly health: Readonly<Record<string, number>>;
    readonly conflicts: number;
    readonly failed: number;
    readonly drifted: number;
    readonly error?: string;
  };
  readonly capacity?: {
    readonly nodes: number;
    readonly readyNodes: number;
    readonly cpu: CapacityUse;
    readonly memory: CapacityUse;
    readonly pods: CapacityUse;
    /** The nodes as recorded: pools of alike nodes with their free amounts. */
    readonly pools?: readonly NodePool[];
    /** The member has not answered since then: this is its last reading. */
    readonly staleSince?: string;
  };
}

/** One workload's replicas in one cluster: what gitfleet decided and what the member reported ready. */
export interface ReplicaCell {
  readonly desired: number;
  readonly ready?: number;
  /** What the member's object asks for, as it reported (a member HPA's count where one scales it). */
  readonly reported?: number;
  /** Old replicas failover keeps there while the new ones come up elsewhere. */
  readonly keeping?: number;
}

export interface WorkloadView {
  readonly resource: string;
  readonly placement: string;
  /** The total (Divided) or per-cluster count (Duplicated) it runs with. */
  readonly replicas: number;
  readonly autoscaledBy?: string;
  readonly scaleDownBy?: string;
  readonly clusters: Readonly<Record<string, ReplicaCell>>;
  readonly unschedulable: number;
  /** "12 of 60 replicas of Deployment games/game fit nowhere: the selected clusters fit 48 (cpu)". */
  readonly shortfall?: string;
  /** The scheduler's one-line diagnosis. */
  readonly summary: string;
  /** Every cluster left out, and why (filtered, frozen or not selected). */
  readonly leftOut: Readonly<Record<string, string>>;
  /** What failover did, when it acted: clusters moved off and why. */
  readonly failover?: Json;
  /** Per cluster, how many more replicas fit and what bounds them (the app endpoint adds it). */
  readonly room?: Readonly<Record<string, string>>;
}

export interface AppClusterView {
  readonly health: string;
  readonly reason?: string;
  readonly objects: number;
  readonly syncedCommit?: string;
  /** "rollout", "migration", "dependsOn", "syncWave", "hook", "suspended", "syncWindow": what holds the app back in this cluster. */
  readonly held?: string;
  readonly problems: readonly Json[];
}

export const APP_STATES = ["Degraded", "Missing", "Unknown", "Progressing", "Healthy"] as const;

export interface AppView {
  readonly name: string;
  /** The worst health over its clusters (Unknown before any sync). */
  readonly health: string;
  /** The source commit that last changed what it renders. */
  readonly sourceCommit?: string;
  readonly clusters: Readonly<Record<string, AppClusterView>>;
  readonly workloads: readonly WorkloadView[];
  readonly errors: readonly Json[];
  /** Its exported services, as status/apps/ records them. */
  readonly services?: readonly AppServiceView[];
}

/** One exported service of an app: where it is exported and imported, and where traffic goes. */
export interface AppServiceView extends Omit<ServiceView, "app"> {
  /** The plan's line for it: "web.shop exported from …; imported in 3 clusters; endpoints …". */
  readonly summary: string;
}

export interface SourceView {
  readonly sourceCommit?: string;
  readonly renderedCommit?: string;
  readonly valid: boolean;
  readonly errors: number;
  readonly warnings: number;
  readonly problems: readonly Json[];
}

export interface FleetView {
  /** The status commit the view was read from. */
  readonly statusCommit?: string;
  readonly source: SourceView;
  /** Worst first, then by name. */
  readonly clusters: readonly ClusterView[];
  /** Worst first, then by name. */
  readonly apps: readonly AppView[];
  readonly migrations: readonly MigrationStatus[];
  /** Control-plane upgrades: each one's version and its batches' state (status/upgrades/). */
  readonly upgrades?: readonly UpgradeStatus[];
}

/** The view of a status commit's files (`status/…` by path) and the rendered commit's Cluster files. */
export function fleetView(
  files: ReadonlyMap<string, string>,
  facts: readonly ClusterFacts[],
  statusCommit?: string,
): FleetView {
  const read = (path: string) => {
    const text = files.get(path);
    return text === undefined ? undefined : asMap(readEmittedYaml(text) ?? {});
  };
  const migrations: MigrationStatus[] = [];
  const upgrades: UpgradeStatus[] = [];
  for (const path of [...files.keys()].sort(compareStrings)) {
    const upgrade = path.startsWith(UPGRADES_DIRECTORY) ? readUpgradeStatus(files.get(path)) : undefined;
    if (upgrade) upgrades.push(upgrade);
    if (path.startsWith("status/migrations/")) {
      const status = readMigrationStatus(read(path));
      if (status) migrations.push(status);
    }
  }
  const apps = [...appStatusFiles(files.keys())].map(([name, path]) => appView(name, read(path) ?? {}));
  const clusters = clusterViews(files, facts, read);
  return {
    ...(statusCommit ? { statusCommit } : {}),
    source: sourceView(read("status/source.yaml")),
    clusters: clusters.sort(
      (a, b) =>
        rank(CLUSTER_STATES, a.state) - rank(CLUSTER_STATES, b.state) || compareStrings(a.name, b.name),
    ),
    apps: apps.sort(
      (a, b) => rank(APP_STATES, a.health) - rank(APP_STATES, b.health) || compareStrings(a.name, b.name),
    ),
    migrations,
    ...(upgrades.length > 0 ? { upgrades } : {}),
  };
}

// Every cluster with a Cluster file or a status file, with its control plane when it is hosted.
function clusterViews(
  files: ReadonlyMap<string, string>,
  facts: readonly ClusterFacts[],
  read: (path: string) => JsonMap | undefined,
): ClusterView[] {
  const byName = new Map(facts.map((f) => [f.name, f]));
  for (const path of files.keys()) {
    const name = /^status\/clusters\/(.+)\.yaml$/.exec(path)?.[1];
    if (name && !byName.has(name)) byName.set(name, { name, mode: "push", unschedulable: false, labels: {} });
  }
  const clusterFiles = new Map(
    [...byName.keys()].map((name) => [name, read(`status/clusters/${name}.yaml`)]),
  );
  const planes = hostedComponents(clusterFiles);
  return [...byName.values()].map((f) => {
    const view = clusterView(f, clusterFiles.get(f.name));
    const controlPlane = planes.get(f.name);
    return controlPlane ? { ...view, controlPlane } : view;
  });
}

function rank(order: readonly string[], value: string): number {
  const index = order.indexOf(value);
  return index < 0 ? order.length : index;
}

function sourceView(file: JsonMap | undefined): SourceView {
  const text = (value: Json | undefined) => (typeof value === "string" ? value : undefined);
  const source = text(file?.sourceCommit);
  const rendered = text(file?.renderedCommit);
  return {
    ...(source ? { sourceCommit: source } : {}),
    ...(rendered ? { renderedCommit: rendered } : {}),
    valid: file?.valid !== false,
    errors: Number(file?.errors ?? 0),
    warnings: Number(file?.warnings ?? 0),
    problems: asList(file?.problems),
  };
}

function clusterView(facts: ClusterFacts, file: JsonMap | undefined): ClusterView {
  const observed = asMap(file?.observed);
  const condition = isJsonMap(observed.condition) ? observed.condition : undefined;
  const reachable = observed.reachable === undefined ? undefined : observed.reachable === true;
  const health = Object.fromEntries(Object.entries(asMap(observed.health)).map(([k, v]) => [k, Number(v)]));
  const count = (key: string) => Number(observed[key] ?? 0);
  const synced =
    reachable === undefined
      ? undefined
      : {
          reachable,
          ...(typeof observed.syncedCommit === "string" ? { commit: observed.syncedCommit } : {}),
          health,
          conflicts: count("conflicts"),
          failed: count("failed"),
          drifted: count("drifted"),
          ...(typeof observed.error === "string" ? { error: observed.error } : {}),
        };
  const view = {
    ...facts,
    objects: Number(file?.objects ?? 0),
    apps: Object.fromEntries(Object.entries(asMap(file?.apps)).map(([k, v]) => [k, Number(v)])),
    ...(condition
      ? {
          condition: {
            ready: condition.ready === true,
            ...(typeof condition.reason === "string" ? { reason: condition.reason } : {}),
            ...(typeof condition.since === "string" ? { since: condition.since } : {}),
            taints: asList(condition.taints).map(String),
          },
        }
      : {}),
    ...(synced ? { synced } : {}),
    ...versionView(observed.kubernetesVersion),
    ...credentialView(observed.credential),
    ...capacityView(observed.capacity, observed.staleSince),
  };
  return { ...view, ...clusterState(view) };
}

// Per hosted cluster, its components' health as its host's status file records it (bounded: the
// status branch is untrusted input).
function hostedComponents(
  files: ReadonlyMap<string, JsonMap | undefined>,
): Map<string, NonNullable<ClusterView["controlPlane"]>> {
  const planes = new Map<string, NonNullable<ClusterView["controlPlane"]>>();
  for (const [host, file] of files)
    for (const [cluster, entry] of Object.entries(asMap(asMap(file?.observed).hostedControlPlanes))) {
      const components = Object.entries(asMap(asMap(entry).components))
        .filter((pair): pair is [string, string] => typeof pair[1] === "string" && pair[1].length <= 200)
        .slice(0, 20);
      if (components.length > 0 && !planes.has(cluster))
        planes.set(cluster, { host, components: Object.fromEntries(components) });
    }
  return planes;
}

// The member's credential as a sync recorded it, when it reads (the status branch is untrusted input).
function credentialView(value: Json | undefined): Pick<ClusterView, "credential"> {
  const record = asMap(value);
  const kind = record.kind === "token" || record.kind === "client-certificate" ? record.kind : undefined;
  const notAfter = record.notAfter;
  if (!kind || typeof notAfter !== "string" || notAfter.length > 40 || Number.isNaN(Date.parse(notAfter)))
    return {};
  return { credential: { kind, notAfter, expiring: record.expiring === true } };
}

// The version a sync recorded, when it is one (the status branch is untrusted input).
function versionView(value: Json | undefined): Pick<ClusterView, "version"> {
  if (typeof value !== "string" || value.length > 64 || !parseGitVersion(value)) return {};
  return { version: value };
}

function capacityView(value: Json | undefined, staleSince: Json | undefined): Pick<ClusterView, "capacity"> {
  if (!isJsonMap(value)) return {};
  const use = (key: string) => {
    const entry = asMap(value[key]);
    return { allocatable: Number(entry.allocatable ?? 0), requested: Number(entry.requested ?? 0) };
  };
  const pools = readCapacityRecord(value)?.pools;
  return {
    capacity: {
      nodes: Number(value.nodes ?? 0),
      readyNodes: Number(value.readyNodes ?? 0),
      cpu: use("cpu"),
      memory: use("memory"),
      pods: use("pods"),
      ...(pools ? { pools } : {}),
      ...(typeof staleSince === "string" && staleSince.length <= 40 ? { staleSince } : {}),
    },
  };
}

// The probes' condition first (a cluster that does not answer), then the last sync's objects.
function clusterState(view: Omit<ClusterView, "state" | "reason">): { state: ClusterState; reason?: string } {
  if (view.condition && !view.condition.ready)
    return { state: "NotReady", reason: view.condition.reason ?? "the probes fail" };
  const synced = view.synced;
  if (synced && !synced.reachable) return { state: "Unreachable", reason: synced.error ?? "no answer" };
  if (!synced) return { state: "Unknown", reason: "not synced yet" };
  const troubles = [
    [synced.failed, "failed"],
    [synced.conflicts, "in conflict"],
    [synced.health.Degraded ?? 0, "Degraded"],
    [synced.health.Missing ?? 0, "Missing"],
  ] as const;
  const parts = troubles.filter(([count]) => count > 0).map(([count, what]) => `${count} ${what}`);
  if (parts.length > 0) return { state: "Degraded", reason: `objects: ${parts.join(", ")}` };
  if ((synced.health.Progressing ?? 0) > 0)
    return { state: "Progressing", reason: `${synced.health.Progressing} objects Progressing` };
  return { state: "Healthy" };
}

function appView(name: string, file: JsonMap): AppView {
  const observed = asMap(file.observed);
  const base = asMap(file.clusters);
  const clusters: Record<string, AppClusterView> = {};
  const readyOf = new Map<string, Record<string, string>>();
  for (const cluster of new Set([...Object.keys(base), ...Object.keys(observed)])) {
    const seen = asMap(observed[cluster]);
    readyOf.set(
      cluster,
      Object.fromEntries(Object.entries(asMap(seen.ready)).map(([k, v]) => [k, String(v)])),
    );
    clusters[cluster] = appInCluster(seen, Number(asMap(base[cluster]).objects ?? 0));
  }
  const workloads = asList(file.workloads).map((entry) => workloadView(asMap(entry), readyOf));
  const healths = Object.values(clusters).map((c) => c.health);
  const health =
    healths.length === 0
      ? "Unknown"
      : (healths.sort((a, b) => rank(APP_STATES, a) - rank(APP_STATES, b))[0] as string);
  return {
    name,
    health,
    ...(typeof file.sourceCommit === "string" ? { sourceCommit: file.sourceCommit } : {}),
    clusters,
    workloads,
    errors: asList(file.errors),
    ...servicesOf(file),
  };
}

// Each exported service of an app's status file, with its line (serviceLine); the file is read, not
// trusted: at most 100 services of at most 100 clusters each.
function servicesOf(file: JsonMap): { services?: AppServiceView[] } {
  const names = (value: Json | undefined) =>
    asList(value)
      .filter((c): c is string => typeof c === "string")
      .slice(0, 100);
  const services = asList(file.services)
    .slice(0, 100)
    .map((entry): AppServiceView => {
      const s = asMap(entry);
      const record = asMap(s.record);
      const view: ServiceView = {
        service: String(s.service),
        app: "",
        exportedFrom: names(s.exportedFrom),
        importedIn: names(s.importedIn),
        ...(s.endpoints !== undefined ? { endpoints: names(s.endpoints) } : {}),
        ...(s.record !== undefined
          ? { record: { name: String(record.name), clusters: names(record.clusters) } }
          : {}),
      };
      const { app: _, ...rest } = view;
      return { ...rest, summary: serviceLine(view) };
    });
  return services.length > 0 ? { services } : {};
}

const HELD_KEYS = Object.values(HOLD_KEYS);

// One app's observed block for one cluster.
function appInCluster(seen: JsonMap, objects: number): AppClusterView {
  const held = HELD_KEYS.find((key) => typeof seen[key] === "string");
  // A rollout's or migration's wait shows beside the health's reason; the other holds say it themselves.
  const own = held !== undefined && held !== "rollout" && held !== "migration";
  const reason =
    typeof seen.reason === "string" && !own ? seen.reason : held ? String(seen[held]) : undefined;
  return {
    health: typeof seen.health === "string" ? seen.health : "Unknown",
    ...(reason ? { reason } : {}),
    objects,
    ...(typeof seen.syncedCommit === "string" ? { syncedCommit: seen.syncedCommit } : {}),
    ...(held ? { held } : {}),
    problems: asList(seen.problems),
  };
}

// status/apps/ shows a workload's replicas in a cluster as "ready/desired", for people reading it.
function readyCell(shown: string | undefined): { ready?: number; reported?: number } {
  const match = shown === undefined ? null : /^(\d+)\/(\d+)$/.exec(shown);
  return match ? { ready: Number(match[1]), reported: Number(match[2]) } : {};
}

function workloadView(entry: JsonMap, readyOf: ReadonlyMap<string, Record<string, string>>): WorkloadView {
  const decision = asMap(entry.decision);
  const diagnosis = asMap(decision.diagnosis);
  const resource = String(entry.resource ?? "");
  const keeping = new Map(
    asList(asMap(entry.failover).keeping).map((k) => [
      String(asMap(k).cluster),
      Number(asMap(k).replicas ?? 0),
    ]),
  );
  const clusters: Record<string, ReplicaCell> = {};
  const names = new Set([...Object.keys(asMap(decision.clusters)), ...keeping.keys()]);
  for (const cluster of [...names].sort(compareStrings)) {
    const ready = readyOf.get(cluster)?.[resource];
    const kept = keeping.get(cluster);
    clusters[cluster] = {
      desired: Number(asMap(decision.clusters)[cluster] ?? 0),
      ...readyCell(ready),
      ...(kept ? { keeping: kept } : {}),
    };
  }
  const leftOut: Record<string, string> = {};
  for (const stage of ["filtered", "frozen", "notSelected"] as const)
    for (const [cluster, reason] of Object.entries(asMap(diagnosis[stage])))
      leftOut[cluster] = String(reason);
  const text = (key: string) => (typeof entry[key] === "string" ? { [key]: entry[key] as string } : {});
  return {
    resource,
    placement: String(entry.placement ?? ""),
    replicas: Number(entry.replicas ?? 0),
    ...text("autoscaledBy"),
    ...text("scaleDownBy"),
    clusters,
    unschedulable: Number(decision.unschedulable ?? 0),
    ...(typeof entry.shortfall === "string" ? { shortfall: oneLine(entry.shortfall, 500) } : {}),
    summary: String(diagnosis.summary ?? ""),
    leftOut,
    ...(entry.failover !== undefined ? { failover: entry.failover } : {}),
  };
}

function connectionMode(spec: JsonMap): ClusterFacts["mode"] {
  if (isJsonMap(spec.controlPlane)) return "hosted";
  return asMap(spec.connection).mode === "pull" ? "pull" : "push";
}

/** A Cluster file's facts (a parsed YAML document); undefined when it is not a Cluster. */
export function clusterFacts(document: unknown): ClusterFacts | undefined {
  const doc = asMap(document as Json);
  if (doc.kind !== "Cluster" || typeof asMap(doc.metadata).name !== "string") return undefined;
  const spec = asMap(doc.spec);
  const text = (key: string) => (typeof spec[key] === "string" ? { [key]: spec[key] as string } : {});
  return {
    name: asMap(doc.metadata).name as string,
    ...text("provider"),
    ...text("region"),
    ...text("zone"),
    mode: connectionMode(spec),
    ...(typeof asMap(spec.controlPlane).host === "string"
      ? { host: String(asMap(spec.controlPlane).host) }
      : {}),
    unschedulable: spec.unschedulable === true,
    labels: Object.fromEntries(
      Object.entries(asMap(asMap(doc.metadata).labels)).map(([k, v]) => [k, String(v)]),
    ),
  };
}
