import type { FleetObject, Labels } from "./fleet-object.js";

// The hosted control planes' kinds (controlplanes/<name>.yaml) and what the render takes of a restore. Types only.

/** A hosted cluster's control plane: where it runs, in which class, and how it is reached. */
export interface ControlPlaneSpec {
  readonly host: string;
  readonly class: string;
  /** Overrides the class's version for this cluster. */
  readonly version?: string;
  readonly namespace?: string;
  readonly serviceCIDR?: string;
  readonly etcd?: {
    readonly mode?: "Dedicated" | "Shared";
    readonly name?: string;
    readonly prefix?: string;
    readonly port?: number;
  };
  readonly expose: {
    readonly type: "LoadBalancer" | "NodePort" | "HostPort";
    readonly port?: number;
    readonly address?: string;
    readonly nodeSelector?: Labels;
  };
  /** The hosted cluster's worker nodes, in pools that join by TLS bootstrapping. */
  readonly nodePools?: readonly NodePoolSpec[];
  /** A token: a change replaces the cluster's CAs and service-account key at once, without an overlap. */
  readonly replaceCAs?: string;
}

/** A pool of a hosted cluster's worker nodes (spec.controlPlane.nodePools[]). */
export interface NodePoolSpec {
  readonly name: string;
  readonly replicas: number;
  /** Default the control plane's version. */
  readonly kubeletVersion?: string;
  readonly labels?: Labels;
  readonly taints?: readonly NodeTaint[];
  readonly join?: { readonly tokenTTL?: string };
  /** How the pool's nodes move to a new kubelet version, a few at a time. */
  readonly upgrade?: { readonly maxUnavailable?: number | string; readonly progressDeadline?: string };
  /** Nodes that stop reporting are removed for the provisioner to replace. */
  readonly repair?: {
    readonly enabled?: boolean;
    readonly notReadyFor?: string;
    readonly maxUnhealthy?: number | string;
  };
}

/** A taint a node registers with. */
export interface NodeTaint {
  readonly key: string;
  readonly value?: string;
  readonly effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

/** One control-plane component's settings in a class. */
export interface ControlPlaneComponentSpec {
  readonly replicas?: number;
  readonly version?: string;
  readonly extraArgs?: Readonly<Record<string, string>>;
}

/** kube-proxy's mode in a hosted cluster's nodes. */
export type KubeProxyMode = "iptables" | "ipvs" | "nftables";

/** The pod network a class renders into its hosted clusters. */
export interface CniSpec {
  readonly plugin: "flannel";
  readonly podCIDR: string;
  readonly backend?: "vxlan" | "host-gw" | "wireguard";
  readonly registry?: string;
  readonly version?: string;
  readonly pluginVersion?: string;
}

/** What every hosted control plane of a class runs (controlplanes/<name>.yaml). */
export interface ControlPlaneClassSpec {
  readonly version: string;
  readonly registry?: string;
  readonly serviceCIDR?: string;
  readonly apiServer?: ControlPlaneComponentSpec;
  readonly controllerManager?: ControlPlaneComponentSpec;
  readonly scheduler?: ControlPlaneComponentSpec;
  readonly etcd: {
    readonly version: string;
    readonly replicas?: 1 | 3 | 5;
    readonly storage?: string;
    readonly storageClassName?: string;
    readonly quota?: string;
    readonly backup?: {
      readonly schedule?: string;
      readonly storage?: string;
      readonly suspend?: boolean;
      /** Snapshots (and off the host, backups) that stay; the oldest beyond are deleted after each run. */
      readonly keep?: number;
      /** gitfleet's image, which prunes the backup volume (default offHost.image). */
      readonly image?: string;
      readonly offHost?: OffHostBackupSpec;
    };
    readonly defrag?: { readonly schedule: string; readonly suspend?: boolean };
    readonly repair?: { readonly enabled?: boolean; readonly notReadyFor?: string };
  };
  readonly certificates?: { readonly validity?: string; readonly renewBefore?: string };
  readonly addons?: {
    readonly coreDNS?: { readonly version?: string; readonly replicas?: number };
    readonly kubeProxy?: { readonly mode?: KubeProxyMode };
    readonly cni?: CniSpec;
  };
}

/**
 * Snapshots that also leave the host: the operator's store by name (its place, credentials and
 * recipients are the operator's, in gitfleet run's --backup-stores-dir) and the gitfleet image the
 * backup Job's push runs.
 */
export interface OffHostBackupSpec {
  readonly store: string;
  readonly image: string;
}

export type ControlPlaneClass = FleetObject<"ControlPlaneClass", ControlPlaneClassSpec>;

/** One batch of a ControlPlaneUpgrade: hosted clusters upgraded together once approved. */
export interface ControlPlaneUpgradeBatch {
  readonly name: string;
  readonly clusters: readonly string[];
  readonly approved?: boolean;
  readonly observe?: string;
  readonly rollback?: boolean;
}

/** Hosted control planes moved to a version in reviewed batches (controlplanes/<name>.yaml). */
export interface ControlPlaneUpgradeSpec {
  readonly version: string;
  /** The version the batches' dedicated etcds move to, first. */
  readonly etcd?: { readonly version: string };
  /** Flags that go with the new version, per component, merged over the class's. */
  readonly apiServer?: { readonly extraArgs?: Readonly<Record<string, string>> };
  readonly controllerManager?: { readonly extraArgs?: Readonly<Record<string, string>> };
  readonly scheduler?: { readonly extraArgs?: Readonly<Record<string, string>> };
  readonly onFailure?: "Halt" | "Rollback";
  readonly observe?: string;
  readonly batches: readonly ControlPlaneUpgradeBatch[];
}

export type ControlPlaneUpgrade = FleetObject<"ControlPlaneUpgrade", ControlPlaneUpgradeSpec>;

/**
 * A one-shot restore of a hosted cluster's dedicated etcd (controlplanes/<name>.yaml): from a
 * snapshot in its host's backup volume, or from an off-host backup (`latest` or an object key), which
 * brings the CAs and the service-account key back too. Exactly one of the two (validation).
 */
export type EtcdRestore = FleetObject<
  "EtcdRestore",
  { readonly cluster: string; readonly snapshot?: string; readonly backup?: string }
>;

/** One member of a hosted cluster's replicated etcd replaced once, Ready or not (controlplanes/<name>.yaml). */
export type EtcdMemberReplacement = FleetObject<
  "EtcdMemberReplacement",
  { readonly cluster: string; readonly member: string }
>;

/**
 * What the policies give the hosted control planes (never in the fleet repo): per hosted cluster,
 * the version a started upgrade batch renders it at, and where its etcd restore stands. The render
 * takes them as input; the model a render returns was generated with them.
 */
export interface HostedPlaneStates {
  readonly versions: ReadonlyMap<string, string>;
  readonly restores: ReadonlyMap<string, RestoreOverlay>;
}

/** Where a hosted cluster's etcd restore stands, as the render takes it. */
export interface RestoreOverlay {
  /** The EtcdRestore's name: the Job and the data directory are named after it. */
  readonly name: string;
  /** The snapshot's file in the host's backup volume; for an off-host backup, the backup's key. */
  readonly snapshot: string;
  /**
   * Stopping, Fetching and Restoring stop the control plane (Fetching has the credentials step bring
   * an off-host backup's keys back and stage its snapshot; Restoring runs the Job); Running starts it
   * from the restored data.
   */
  readonly phase: "Stopping" | "Fetching" | "Restoring" | "Running";
  /** From an off-host backup: which one (`latest` or a key); the Job fetches the staged snapshot. */
  readonly backup?: string;
  /** From an off-host backup: the source commit the restore started at, which tells its fetch from an earlier one's of the same name. */
  readonly startedIn?: string;
}
