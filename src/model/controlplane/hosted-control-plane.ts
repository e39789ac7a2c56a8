import { parseQuantity } from "../../apimachinery/quantity.js";
import { parseDuration } from "../duration.js";
import type {
  Cluster,
  CniSpec,
  ControlPlaneClass,
  ControlPlaneSpec,
  EtcdRestore,
  FleetModel,
  HostedPlaneStates,
  KubeProxyMode,
  Labels,
  OffHostBackupSpec,
  RestoreOverlay,
} from "../types.js";
import { type ResolvedNodePool, resolveNodePools } from "./node-pools.js";

/**
 * A hosted cluster's control plane with every default applied: what the render writes into the host
 * and what the credentials step generates certificates for. Derived from the Cluster and its class
 * alone, so two readers never disagree.
 */
export interface HostedControlPlane {
  /** The hosted cluster. */
  readonly cluster: string;
  readonly host: string;
  readonly className: string;
  /** The host namespace everything of this control plane lives in. */
  readonly namespace: string;
  readonly registry: string;
  readonly serviceCIDR: string;
  readonly apiServer: ResolvedComponent;
  readonly controllerManager: ResolvedComponent;
  readonly scheduler: ResolvedComponent;
  readonly etcd: ResolvedEtcd;
  /** An etcd restore stops the control plane (every component at zero replicas) until it restored. */
  readonly stopped: boolean;
  /** The etcd restore that runs or last ran, if any. */
  readonly restore: RestoreOverlay | undefined;
  readonly expose: ControlPlaneSpec["expose"];
  readonly coreDNS: { readonly version: string; readonly replicas: number };
  readonly kubeProxy: { readonly mode: KubeProxyMode };
  /** The pod network gitfleet renders into the hosted cluster, if the class asks for one. */
  readonly cni: ResolvedCni | undefined;
  readonly certificates: {
    readonly validity: string;
    readonly renewBefore: string;
    /** The Cluster's replaceCAs token: its CAs and service-account key were replaced for it (compromised keys). */
    readonly replaceCAs: string | undefined;
  };
  /** The cluster's worker node pools, which join by TLS bootstrapping. */
  readonly nodePools: readonly ResolvedNodePool[];
}

/** A class's pod network with its defaults. */
export interface ResolvedCni {
  readonly plugin: "flannel";
  readonly podCIDR: string;
  readonly backend: "vxlan" | "host-gw" | "wireguard";
  readonly registry: string;
  readonly version: string;
  readonly pluginVersion: string;
}

/** Flannel's images and backend unless the class says otherwise. */
export const DEFAULT_FLANNEL = {
  registry: "ghcr.io/flannel-io",
  version: "v0.26.7",
  pluginVersion: "v1.6.2-flannel1",
  backend: "vxlan",
} as const;

export interface ResolvedComponent {
  readonly version: string;
  readonly replicas: number;
  readonly extraArgs: Readonly<Record<string, string>>;
}

export interface ResolvedEtcd {
  readonly mode: "Dedicated" | "Shared";
  /** Dedicated: "etcd" in the control plane's namespace; Shared: the shared etcd's name. */
  readonly name: string;
  /** Where the etcd's objects live: the control plane's namespace, or the shared etcd's own. */
  readonly namespace: string;
  /** The key prefix of this cluster's data: "" for a dedicated etcd. */
  readonly prefix: string;
  readonly version: string;
  readonly replicas: number;
  readonly storage: string;
  readonly storageClassName: string | undefined;
  /** The database's space quota in bytes (--quota-backend-bytes); undefined: etcd's own (2 GiB). */
  readonly quotaBytes: number | undefined;
  readonly backup: {
    readonly schedule: string;
    readonly storage: string;
    readonly suspend: boolean;
    /** The operator's store each snapshot also goes to, encrypted (dedicated etcds only). */
    readonly offHost: OffHostBackupSpec | undefined;
    /**
     * Retention: how many snapshots stay (in the volume, and off the host in the store), pruned by
     * gitfleet's `image` after each run, and those held beside them; undefined when the class keeps
     * every one.
     */
    readonly prune: { readonly keep: number; readonly image: string; readonly held: HeldBackups } | undefined;
  };
  /** HostPort exposure: the etcd's client port on the host node (peer is the next). */
  readonly hostPort: number | undefined;
  /** Where etcd keeps its data in its volume: data, or restore-<name> once a restore ran. */
  readonly dataDir: string;
  /** Scheduled defragmentation, when the class asks for it. */
  readonly defrag: { readonly schedule: string; readonly suspend: boolean } | undefined;
  /** Replacing a member NotReady for notReadyForMs (a replicated etcd only). */
  readonly repair: { readonly enabled: boolean; readonly notReadyForMs: number };
}

/** Each etcd member's volume, unless the class says. */
export const DEFAULT_ETCD_STORAGE = "8Gi";
/** How long an etcd member stays NotReady before it is replaced, unless the class says. */
export const DEFAULT_ETCD_NOT_READY_FOR = "5m";
/** The shortest notReadyFor an etcd's repair may ask for. */
export const MIN_ETCD_NOT_READY_FOR_MS = 10_000;

export const DEFAULT_REGISTRY = "registry.k8s.io";
/** The mount point of etcd's volume; etcd makes its data directory inside it with the 0700 it insists on. */
export const ETCD_VOLUME_DIR = "/var/lib/etcd";

/** etcd's own database space quota, when a class sets none (--quota-backend-bytes' default). */
const ETCD_DEFAULT_QUOTA = 2 * 1024 ** 3;
/** Room beside a snapshot in its backup archive: the PKI, the archive's headers, age's framing. */
const ARCHIVE_ROOM = 64 * 1024 ** 2;

/**
 * The largest backup archive of this control plane's etcd: a snapshot is at most its quota, and the
 * archive that with room. What a backup push needs in scratch, and what a restore fetches at most.
 */
export function maxBackupBytes(plane: Pick<HostedControlPlane, "etcd">): number {
  return (plane.etcd.quotaBytes ?? ETCD_DEFAULT_QUOTA) + ARCHIVE_ROOM;
}

/** The data directory a restore writes into (a new one: etcdutl never overwrites data). */
export function restoredDataDir(restore: string): string {
  return `${ETCD_VOLUME_DIR}/restore-${restore}`;
}
export const DEFAULT_SERVICE_CIDR = "10.96.0.0/12";
export const DEFAULT_COREDNS_VERSION = "v1.11.3";
const DEFAULT_VALIDITY = "8760h";
const DEFAULT_RENEW_BEFORE = "720h";

/** The namespace in the host of a hosted cluster's control plane, unless the cluster names one. */
export function controlPlaneNamespace(cluster: Cluster): string {
  return cluster.spec.controlPlane?.namespace ?? `gitfleet-cp-${cluster.metadata.name}`;
}

/** The namespace in the host of a shared etcd. */
export function sharedEtcdNamespace(name: string): string {
  return `gitfleet-etcd-${name}`;
}

/**
 * The snapshots (in the host's backup volume) and off-host backups (store keys) that the EtcdRestores
 * in the repo name: retention neither deletes nor counts them while their restore is in the repo.
 */
export interface HeldBackups {
  readonly snapshots: readonly string[];
  readonly backups: readonly string[];
}

export const NO_HELD_BACKUPS: HeldBackups = { snapshots: [], backups: [] };

/** What the repo's EtcdRestores of `cluster` name (an off-host `latest` names no key). Pure. */
export function heldBackups(restores: readonly EtcdRestore[], cluster: string): HeldBackups {
  const own = restores.filter((r) => r.spec.cluster === cluster);
  const names = (pick: (r: EtcdRestore) => string | undefined) =>
    [...new Set(own.flatMap((r) => pick(r) ?? []))].sort();
  return {
    snapshots: names((r) => r.spec.snapshot),
    backups: names((r) => (r.spec.backup === "latest" ? undefined : r.spec.backup)),
  };
}

/** No upgrade batch started, no restore under way: every hosted cluster at its class's or its own version. */
export const NO_PLANE_STATES: HostedPlaneStates = { versions: new Map(), restores: new Map() };

/**
 * Where a hosted cluster's restore stands for the render: what the restores policy gives, except that
 * a restore from an off-host backup in the repo that the policy does not give (not started yet, or
 * Failed) keeps the control plane stopped — a cluster whose host just changed never starts empty
 * there, and takes no backup of itself, before its restore has run. Pure.
 */
export function restoreOverlayOf(
  restores: readonly EtcdRestore[],
  given: ReadonlyMap<string, RestoreOverlay>,
  cluster: string,
): RestoreOverlay | undefined {
  const overlay = given.get(cluster);
  const pending = restores.find(
    (r) => r.spec.cluster === cluster && r.spec.backup !== undefined && r.metadata.name !== overlay?.name,
  );
  if (!pending?.spec.backup) return overlay;
  return {
    name: pending.metadata.name,
    snapshot: pending.spec.backup,
    phase: "Stopping",
    backup: pending.spec.backup,
  };
}

/**
 * The control planes of a fleet resolved against their classes, with their Clusters (hosted clusters
 * whose class is missing are invalid and left out); with `host`, only those that host runs.
 */
export function resolveControlPlanes(
  model: Pick<FleetModel, "clusters" | "controlPlaneClasses" | "controlPlaneUpgrades" | "etcdRestores">,
  host?: string,
  states: HostedPlaneStates = NO_PLANE_STATES,
): { readonly plane: HostedControlPlane; readonly cluster: Cluster; readonly found: ControlPlaneClass }[] {
  const classes = new Map(model.controlPlaneClasses.map((c) => [c.metadata.name, c]));
  return model.clusters.flatMap((cluster) => {
    const spec = cluster.spec.controlPlane;
    if (!spec || (host !== undefined && spec.host !== host)) return [];
    const plane = resolveControlPlane(
      cluster,
      classes,
      upgradeOverlay(model, states.versions, cluster.metadata.name),
      restoreOverlayOf(model.etcdRestores, states.restores, cluster.metadata.name),
      heldBackups(model.etcdRestores, cluster.metadata.name),
    );
    const found = classes.get(spec.class);
    return plane && found ? [{ plane, cluster, found }] : [];
  });
}

/** The clusters whose control plane another cluster hosts. */
export function hostedClusters(clusters: readonly Cluster[]): Cluster[] {
  return clusters.filter((cluster) => cluster.spec.controlPlane !== undefined);
}

/**
 * What a started ControlPlaneUpgrade batch gives a hosted cluster: the upgrade's version and the
 * flags that go with it.
 */
export interface UpgradeOverlay {
  readonly version: string;
  /** The version a dedicated etcd moves to with it (a shared one moves with its class). */
  readonly etcd?: { readonly version: string };
  readonly apiServer?: { readonly extraArgs?: Readonly<Record<string, string>> };
  readonly controllerManager?: { readonly extraArgs?: Readonly<Record<string, string>> };
  readonly scheduler?: { readonly extraArgs?: Readonly<Record<string, string>> };
}

/**
 * The overlay of a hosted cluster whose upgrade batch started (`versions` names its
 * version): the upgrade that lists it at that version gives the flags. Undefined: its class's alone.
 */
export function upgradeOverlay(
  model: Pick<FleetModel, "controlPlaneUpgrades">,
  versions: ReadonlyMap<string, string>,
  cluster: string,
): UpgradeOverlay | undefined {
  const version = versions.get(cluster);
  if (version === undefined) return undefined;
  const upgrade = (model.controlPlaneUpgrades ?? []).find(
    (u) => u.spec.version === version && u.spec.batches.some((b) => b.clusters.includes(cluster)),
  );
  return upgrade ? { ...upgrade.spec, version } : { version };
}

/**
 * Resolves a hosted cluster's control plane against its class. Undefined for a cluster that is not
 * hosted or whose class does not exist (validation reports that). `upgrade` is what a started
 * ControlPlaneUpgrade batch gives it: like a cluster's own version, its version moves every
 * component; its flags are merged over the class's. `held` is what the repo's restores of it name,
 * which its backups' retention keeps.
 */
export function resolveControlPlane(
  cluster: Cluster,
  classes: ReadonlyMap<string, ControlPlaneClass>,
  upgrade?: UpgradeOverlay,
  restore?: RestoreOverlay,
  held: HeldBackups = NO_HELD_BACKUPS,
): HostedControlPlane | undefined {
  const given = cluster.spec.controlPlane;
  const spec = given && upgrade ? { ...given, version: upgrade.version } : given;
  const found = spec ? classes.get(spec.class) : undefined;
  if (!spec || !found) return undefined;
  const of = found.spec;
  const version = spec.version ?? of.version;
  const name = cluster.metadata.name;
  const namespace = controlPlaneNamespace(cluster);
  const component = (
    c: typeof of.apiServer,
    replicas: number,
    own: boolean,
    flags: Readonly<Record<string, string>> | undefined,
  ): ResolvedComponent => ({
    version: own && c?.version ? c.version : version,
    replicas: c?.replicas ?? replicas,
    extraArgs: flags ? { ...(c?.extraArgs ?? {}), ...flags } : (c?.extraArgs ?? {}),
  });
  const apiServer = component(of.apiServer, 2, false, upgrade?.apiServer?.extraArgs);
  return {
    cluster: name,
    host: spec.host,
    className: spec.class,
    namespace,
    registry: of.registry ?? DEFAULT_REGISTRY,
    serviceCIDR: spec.serviceCIDR ?? of.serviceCIDR ?? DEFAULT_SERVICE_CIDR,
    // A cluster's own version moves every component; a component's version in the class trails the class.
    apiServer,
    controllerManager: component(
      of.controllerManager,
      1,
      spec.version === undefined,
      upgrade?.controllerManager?.extraArgs,
    ),
    scheduler: component(of.scheduler, 1, spec.version === undefined, upgrade?.scheduler?.extraArgs),
    etcd: overlaidEtcd(resolveEtcd(name, namespace, spec, of, held), upgrade, restore),
    stopped: restore !== undefined && restore.phase !== "Running",
    restore,
    expose: spec.expose,
    coreDNS: {
      version: of.addons?.coreDNS?.version ?? DEFAULT_COREDNS_VERSION,
      replicas: of.addons?.coreDNS?.replicas ?? 2,
    },
    kubeProxy: { mode: of.addons?.kubeProxy?.mode ?? "iptables" },
    cni: resolveCni(of.addons?.cni),
    certificates: {
      validity: of.certificates?.validity ?? DEFAULT_VALIDITY,
      renewBefore: of.certificates?.renewBefore ?? DEFAULT_RENEW_BEFORE,
      replaceCAs: spec.replaceCAs,
    },
    nodePools: resolveNodePools(spec.nodePools, apiServer.version),
  };
}

function resolveCni(cni: CniSpec | undefined): ResolvedCni | undefined {
  if (!cni) return undefined;
  return {
    plugin: cni.plugin,
    podCIDR: cni.podCIDR,
    backend: cni.backend ?? DEFAULT_FLANNEL.backend,
    registry: cni.registry ?? DEFAULT_FLANNEL.registry,
    version: cni.version ?? DEFAULT_FLANNEL.version,
    pluginVersion: cni.pluginVersion ?? DEFAULT_FLANNEL.pluginVersion,
  };
}

// A dedicated etcd at the version a started upgrade batch gives it, on the data a restore made.
function overlaidEtcd(
  etcd: ResolvedEtcd,
  upgrade: UpgradeOverlay | undefined,
  restore: RestoreOverlay | undefined,
): ResolvedEtcd {
  return {
    ...etcd,
    ...(upgrade?.etcd && etcd.mode === "Dedicated" ? { version: upgrade.etcd.version } : {}),
    ...(restore?.phase === "Running" ? { dataDir: restoredDataDir(restore.name) } : {}),
  };
}

// Pruning needs gitfleet's image: the class's own, or the push's (validation refuses keep without one).
// A shared etcd is never restored, so nothing of it is held.
function backupPrune(
  backup: ControlPlaneClass["spec"]["etcd"]["backup"],
  shared: boolean,
  held: HeldBackups,
): ResolvedEtcd["backup"]["prune"] {
  const image = backup?.image ?? (shared ? undefined : backup?.offHost?.image);
  if (backup?.keep === undefined || image === undefined) return undefined;
  return { keep: backup.keep, image, held: shared ? NO_HELD_BACKUPS : held };
}

function resolveEtcd(
  cluster: string,
  namespace: string,
  spec: ControlPlaneSpec,
  of: ControlPlaneClass["spec"],
  held: HeldBackups,
): ResolvedEtcd {
  const shared = spec.etcd?.mode === "Shared";
  const name = shared ? (spec.etcd?.name ?? cluster) : "etcd";
  const backup = of.etcd.backup;
  return {
    mode: shared ? "Shared" : "Dedicated",
    name,
    namespace: shared ? sharedEtcdNamespace(name) : namespace,
    prefix: shared ? (spec.etcd?.prefix ?? `/${cluster}`) : "",
    version: of.etcd.version,
    replicas: of.etcd.replicas ?? 1,
    storage: of.etcd.storage ?? DEFAULT_ETCD_STORAGE,
    storageClassName: of.etcd.storageClassName,
    quotaBytes: of.etcd.quota === undefined ? undefined : parseQuantity(of.etcd.quota),
    backup: {
      schedule: backup?.schedule ?? "0 */6 * * *",
      storage: backup?.storage ?? "16Gi",
      suspend: backup?.suspend ?? false,
      offHost: shared ? undefined : backup?.offHost,
      prune: backupPrune(backup, shared, held),
    },
    hostPort: etcdHostPort(spec),
    dataDir: `${ETCD_VOLUME_DIR}/data`,
    defrag: of.etcd.defrag
      ? { schedule: of.etcd.defrag.schedule, suspend: of.etcd.defrag.suspend ?? false }
      : undefined,
    repair: etcdRepair(of.etcd),
  };
}

// Repair: a NOSPACE alarm cleared, and (a replicated etcd's) members replaced; a duration the
// schema let through, or the default.
function etcdRepair(etcd: ControlPlaneClass["spec"]["etcd"]): ResolvedEtcd["repair"] {
  return {
    enabled: etcd.repair?.enabled ?? true,
    notReadyForMs:
      parseDuration(etcd.repair?.notReadyFor ?? DEFAULT_ETCD_NOT_READY_FOR) ??
      (parseDuration(DEFAULT_ETCD_NOT_READY_FOR) as number),
  };
}

function etcdHostPort(spec: ControlPlaneSpec): number | undefined {
  if (spec.expose.type !== "HostPort") return undefined;
  if (spec.etcd?.mode === "Shared") return spec.etcd.port;
  return spec.expose.port === undefined ? undefined : spec.expose.port + 1;
}

/** The ports a HostPort control plane takes on its host node, by what uses them. */
export function hostPortsOf(plane: HostedControlPlane): Readonly<Record<string, number>> {
  const base = plane.expose.port;
  if (plane.expose.type !== "HostPort" || base === undefined) return {};
  const ports: Record<string, number> = {
    "kube-apiserver": base,
    "kube-controller-manager": base + 3,
    "kube-scheduler": base + 4,
  };
  if (plane.etcd.mode === "Dedicated") {
    ports["etcd client"] = base + 1;
    ports["etcd peer"] = base + 2;
    ports["etcd metrics"] = base + 5;
  }
  return ports;
}

/** The labels every object of a control plane carries. */
export function controlPlaneLabels(plane: HostedControlPlane, component?: string): Labels {
  return {
    "gitfleet.io/hosted-cluster": plane.cluster,
    ...(component ? { "app.kubernetes.io/component": component } : {}),
  };
}
