/**
 * The fleet model: what people wrote in the fleet repo, validated and typed. Field names follow the
 * JSON Schemas in schema/ (the reference documentation); defaults are applied by readers, not here,
 * so the model says exactly what the repo says.
 */

export type { JsonPatchOperation } from "../apimachinery/patch/json-patch-operation.js";
export type * from "./control-plane-types.js";
export type * from "./fleet-object.js";
export type * from "./quota-types.js";
export type * from "./scaling-types.js";
export type * from "./team-types.js";

import type { JsonPatchOperation } from "../apimachinery/patch/json-patch-operation.js";
import type {
  ControlPlaneClass,
  ControlPlaneSpec,
  ControlPlaneUpgrade,
  EtcdMemberReplacement,
  EtcdRestore,
} from "./control-plane-types.js";
import type {
  ClusterAffinity,
  FleetObject,
  LabelSelector,
  Labels,
  Origin,
  ResourceSelector,
  Taint,
  Toleration,
} from "./fleet-object.js";
import type { FederatedResourceQuota } from "./quota-types.js";
import type { CronScale, FederatedHPA, ScaleDownRequest } from "./scaling-types.js";
import type { SealedSecret } from "./sops-file.js";
import type { Team } from "./team-types.js";

export interface PluginSet {
  readonly enabled?: readonly string[];
  readonly disabled?: readonly string[];
}

export interface SchedulerProfile {
  readonly name: string;
  readonly plugins?: Partial<Record<"filter" | "score" | "select" | "replicas", PluginSet>>;
}

export interface RolloutSpec {
  readonly strategy?: "Serial" | "Parallel";
  readonly order?: readonly string[];
  readonly orderByLabel?: string;
  readonly maxUnavailableClusters?: number | string;
  readonly timeout?: string;
}

export interface FleetSpec {
  /** The Kubernetes minor ("1.36") manifests are validated against. */
  readonly kubernetesVersion?: string;
  readonly platformOwners?: readonly string[];
  readonly sourceBranch?: string;
  readonly statusBranch?: string;
  readonly reconcileInterval?: string;
  readonly driftInterval?: string;
  readonly statusInterval?: string;
  readonly commitAuthor?: { readonly name: string; readonly email: string };
  readonly clusterHealth?: {
    readonly probeInterval?: string;
    readonly probeTimeout?: string;
    readonly failureThreshold?: number;
    readonly successThreshold?: number;
    readonly noExecuteAfter?: string;
  };
  readonly rollout?: RolloutSpec;
  readonly pruning?: { readonly maxDeletionPercent?: number; readonly allowPrune?: string };
  /** What a pull request's plan fails on: replicas that fit nowhere fail it, or only warn (default). */
  readonly plan?: { readonly unplacedReplicas?: "Warn" | "Fail" };
  /** sops-encrypted Secrets: the age recipients every encrypted file must name one of. */
  readonly sops?: { readonly ageRecipients?: readonly string[] };
  readonly schedulerProfiles?: readonly SchedulerProfile[];
  readonly notifications?: NotificationsSpec;
  readonly syncWindows?: readonly SyncWindowSpec[];
  readonly serviceDiscovery?: ServiceDiscoverySpec;
}

/** Multi-cluster services (fleet.yaml spec.serviceDiscovery): the cluster set and how exports reach consumers. */
export interface ServiceDiscoverySpec {
  /** ClusterProperty clusterset.k8s.io in every member (KEP-2149). */
  readonly clusterSetID: string;
  /**
   * mcs: exports, imports and cluster properties for an in-member MCS implementation; endpoints:
   * EndpointSlices and the clusterset.local zone rendered from entry points; dns: external-dns records.
   */
  readonly mode: "mcs" | "endpoints" | "dns";
  /** The Service whose LoadBalancer address is every exported service's entry point in a member. */
  readonly gateway?: { readonly namespace: string; readonly name: string };
  /** Where the members' CoreDNS reads the clusterset.local zone (endpoints mode). */
  readonly zone?: { readonly namespace?: string; readonly name?: string; readonly ttl?: number };
  /** The DNS cluster and domain of north-south records (dns mode). */
  readonly dns?: {
    readonly cluster: string;
    readonly domain: string;
    readonly namespace?: string;
    readonly ttl?: number;
    readonly weightKey?: string;
  };
}

/** When changes may reach clusters (fleet.yaml spec.syncWindows; Argo CD's sync windows). */
export interface SyncWindowSpec {
  readonly name?: string;
  readonly kind: "allow" | "deny";
  /** A five-field cron schedule or an @-macro: when the window opens. */
  readonly schedule: string;
  /** How long it stays open after each start. */
  readonly duration: string;
  /** IANA time zone of the schedule; default UTC. */
  readonly timeZone?: string;
  /** App names or patterns with `*`; default all. */
  readonly apps?: readonly string[];
  /** Cluster names or patterns with `*`; default all. */
  readonly clusters?: readonly string[];
  /** The window holds failover's replica moves too (default: failover passes every window). */
  readonly blockFailover?: boolean;
}

/** Who is told what: sinks, and routes from events to them (fleet.yaml spec.notifications). */
export interface NotificationsSpec {
  readonly sinks?: readonly NotificationSink[];
  readonly routes?: readonly NotificationRoute[];
}

export interface NotificationSink {
  readonly name: string;
  readonly type: "webhook" | "slack" | "forgeStatus";
  /** The operator's files <secretRef>.url and <secretRef>.signing-key in --notification-secrets-dir. */
  readonly secretRef?: string;
}

export interface NotificationRoute {
  /** Event types (observe/fleet-events.ts), or "*". */
  readonly events: readonly string[];
  readonly sinks: readonly string[];
}

export type Fleet = FleetObject<"Fleet", FleetSpec>;

export interface ClusterSpec {
  readonly provider?: string;
  readonly region?: string;
  readonly zone?: string;
  readonly taints?: readonly Taint[];
  readonly unschedulable?: boolean;
  readonly drain?: boolean;
  readonly connection?: {
    readonly mode?: "push" | "pull" | "hosted";
    readonly context?: string;
    readonly kubeconfigFile?: string;
    readonly kubeconfigEnv?: string;
  };
  /** Kube-on-Kube: the cluster's control plane runs in another member, the host. */
  readonly controlPlane?: ControlPlaneSpec;
  /** Leave every app in the cluster as it runs (drift reported, not corrected). */
  readonly suspend?: boolean;
}

export type Cluster = FleetObject<"Cluster", ClusterSpec>;

export interface AppSpec {
  readonly namespace?: string;
  readonly owner?: string;
  readonly description?: string;
  /** Apps that must be Healthy in a cluster (at their rendered commit) before this one syncs there. */
  readonly dependsOn?: readonly string[];
  /** Leave the app as it runs everywhere: drift reported, not corrected; failover and autoscaling held. */
  readonly suspend?: boolean;
  readonly kustomize?: AppKustomizeSpec;
  readonly helm?: AppHelmSpec;
  readonly syncPolicy?: {
    readonly selfHeal?: boolean;
    readonly prune?: boolean;
    readonly forceConflicts?: boolean;
    readonly allowPrune?: string;
  };
}

export type AppObject = FleetObject<"App", AppSpec>;

/** An app built by kustomize: its default kustomization and per-cluster ones (first match wins). */
export interface AppKustomizeSpec {
  readonly path?: string;
  readonly targets?: readonly KustomizeTargetSpec[];
}

export interface KustomizeTargetSpec {
  readonly name: string;
  readonly clusterName?: string;
  readonly clusterSelector?: LabelSelector;
  readonly path: string;
}

/**
 * An app rendered from a Helm chart (`helm template` semantics): a chart directory in the fleet repo,
 * or a chart version from an HTTP chart repository or an OCI registry.
 */
export interface AppHelmSpec {
  /** A directory relative to the app's, a chart name in `repo`, or an oci:// reference. */
  readonly chart: string;
  /** An HTTP(S) chart repository's URL (its index.yaml names the chart's versions). */
  readonly repo?: string;
  /** The exact chart version, for a chart from a repository or registry. */
  readonly version?: string;
  /** Default: the app's name. */
  readonly releaseName?: string;
  /** The release namespace. Default: the app's namespace. */
  readonly namespace?: string;
  /** Values files relative to the app's directory, merged in order over the chart's own values. */
  readonly valuesFiles?: readonly string[];
  /** Values merged last. */
  readonly values?: Readonly<Record<string, unknown>>;
  /** Per-cluster values, first match wins. */
  readonly targets?: readonly HelmTargetSpec[];
}

export interface HelmTargetSpec {
  readonly name: string;
  readonly clusterName?: string;
  readonly clusterSelector?: LabelSelector;
  /** Merged after the app's own values files and values. */
  readonly valuesFiles?: readonly string[];
  readonly values?: Readonly<Record<string, unknown>>;
}

export interface ReplicaScheduling {
  readonly type?: "Duplicated" | "Divided";
  readonly divisionPreference?: "Weighted" | "Aggregated";
  readonly weightPreference?: {
    readonly staticWeightList?: readonly {
      readonly targetCluster: ClusterAffinity;
      readonly weight: number;
    }[];
    readonly dynamicWeight?: "AvailableReplicas";
  };
  readonly clusterLimits?: readonly {
    readonly targetCluster: ClusterAffinity;
    readonly minReplicas?: number;
    readonly maxReplicas?: number;
  }[];
  readonly avoidDisruption?: boolean;
  readonly rebalanceGeneration?: number;
}

export type PurgeMode = "Gracefully" | "Directly" | "Never";

export interface SpreadConstraint {
  readonly spreadByField?: "cluster" | "region" | "zone" | "provider";
  readonly spreadByLabel?: string;
  readonly minGroups?: number;
  readonly maxGroups?: number;
}

export interface PlacementSpec {
  readonly resourceSelectors?: readonly ResourceSelector[];
  readonly apps?: readonly string[];
  readonly priority?: number;
  readonly schedulerProfile?: string;
  readonly clusterAffinity?: ClusterAffinity;
  readonly tolerations?: readonly Toleration[];
  readonly spreadConstraints?: readonly SpreadConstraint[];
  readonly maxClusters?: number;
  readonly replicaScheduling?: ReplicaScheduling;
  readonly failover?: {
    readonly cluster?: {
      readonly tolerationSeconds?: number;
      readonly purgeMode?: PurgeMode;
      readonly gracePeriodSeconds?: number;
      readonly statePreservation?: StatePreservation;
    };
    readonly application?: {
      readonly unschedulableSeconds?: number;
      readonly degradedSeconds?: number;
      readonly purgeMode?: PurgeMode;
      readonly gracePeriodSeconds?: number;
      readonly coolDownSeconds?: number;
      readonly statePreservation?: StatePreservation;
    };
  };
  readonly rollout?: RolloutSpec;
  readonly conflictResolution?: "Abort" | "Adopt";
  readonly forceConflicts?: boolean;
  /** Leave what it places as it runs: drift reported, not corrected; failover and autoscaling held. */
  readonly suspend?: boolean;
  /** Where the ServiceExports it places are imported; default every cluster. */
  readonly imports?: { readonly clusterAffinity: ClusterAffinity };
  /** Ordered tiers of clusters for Divided replicas: each takes what fits, the rest overflows to the next. */
  readonly overflow?: OverflowSpec;
}

/** One tier of an overflow: a named group of clusters. A cluster belongs to the first tier that selects it. */
export interface OverflowTier {
  readonly name: string;
  readonly clusterAffinity: ClusterAffinity;
}

export interface OverflowSpec {
  readonly tiers: readonly OverflowTier[];
  /**
   * Never (default): replicas that overflowed stay where they run until the total shrinks (the last
   * tier gives back first); WhenRoom: an earlier tier that regains room takes them back.
   */
  readonly reclaim?: "Never" | "WhenRoom";
}

export type Placement = FleetObject<"Placement", PlacementSpec>;

export interface Overriders {
  readonly imageOverrider?: readonly {
    readonly predicate?: { readonly path: string };
    readonly component: "Registry" | "Repository" | "Tag";
    readonly operator: "add" | "remove" | "replace";
    readonly value?: string;
  }[];
  readonly commandOverrider?: readonly CommandArgsOverrider[];
  readonly argsOverrider?: readonly CommandArgsOverrider[];
  readonly labelsOverrider?: readonly MetadataMapOverrider[];
  readonly annotationsOverrider?: readonly MetadataMapOverrider[];
  readonly jsonPatch?: readonly JsonPatchOperation[];
  readonly mergePatch?: Readonly<Record<string, unknown>>;
  /** For a Helm app the Override selects by app: values merged last when its chart renders for these clusters. */
  readonly helmValues?: Readonly<Record<string, unknown>>;
}

export interface CommandArgsOverrider {
  readonly containerName: string;
  readonly operator: "add" | "remove";
  readonly value: readonly string[];
}

export interface MetadataMapOverrider {
  readonly operator: "add" | "remove" | "replace";
  readonly value: Labels;
}

export interface OverrideSpec {
  readonly resourceSelectors?: readonly ResourceSelector[];
  readonly apps?: readonly string[];
  readonly overrideRules: readonly {
    readonly targetCluster?: ClusterAffinity;
    readonly overriders: Overriders;
  }[];
}

export type Override = FleetObject<"Override", OverrideSpec>;

export type HealthOperator =
  | "Equal"
  | "NotEqual"
  | "GreaterThanOrEqual"
  | "GreaterThan"
  | "LessThanOrEqual"
  | "LessThan";

export interface ResourceInterpreterSpec {
  readonly target: { readonly apiVersion: string; readonly kind: string };
  readonly replicasPath?: string;
  readonly podTemplatePath?: string;
  readonly statusPaths?: Partial<
    Record<
      "replicas" | "readyReplicas" | "availableReplicas" | "updatedReplicas" | "observedGeneration",
      string
    >
  >;
  readonly health?: {
    readonly readyCondition?: { readonly type: string; readonly status?: "True" | "False" | "Unknown" };
    readonly rules?: readonly {
      readonly field: string;
      readonly operator: HealthOperator;
      readonly value?: string | number | boolean;
      readonly valueFrom?: string;
    }[];
  };
  readonly retainPaths?: readonly string[];
  readonly podsToDeletePath?: string;
}

export type ResourceInterpreter = FleetObject<"ResourceInterpreter", ResourceInterpreterSpec>;

export interface MigrationBatch {
  readonly name: string;
  readonly apps: readonly string[];
  readonly clusters?: readonly string[];
  readonly approved?: boolean;
  readonly observe?: string;
  readonly rollback?: boolean;
}

export interface MigrationSpec {
  readonly conflictResolution?: "Adopt" | "Abort";
  readonly onFailure?: "Halt" | "Rollback";
  readonly observe?: string;
  readonly batches: readonly MigrationBatch[];
}

export type Migration = FleetObject<"Migration", MigrationSpec>;

/** A Kubernetes object from apps/: any kind, native or custom, with its identity resolved. */
export interface Resource {
  /** The app (directory under apps/) the template belongs to. */
  readonly app: string;
  readonly apiVersion: string;
  /** The API group ("" for core), derived from apiVersion. */
  readonly group: string;
  readonly kind: string;
  readonly name: string;
  /** The effective namespace: as written, else the app's default; undefined for cluster-scoped kinds. */
  readonly namespace: string | undefined;
  readonly labels: Labels;
  /** The object exactly as written (the namespace default is applied by the renderer). */
  readonly object: Readonly<Record<string, unknown>>;
  readonly origin: Origin;
  /** A Secret from a sops-encrypted file: its values in `object` are ciphertexts, opened only at sync. */
  readonly sealed?: SealedSecret;
}

/** An app: a directory under apps/ with its optional app.yaml and its resource templates. */
export interface App {
  readonly name: string;
  readonly definition: AppObject | undefined;
  /**
   * The app's resource templates. For an app built by kustomize: every object its default build
   * and its targets' builds make (placement and replica division use the default build's bodies).
   */
  readonly resources: readonly Resource[];
  /** For an app built by kustomize or Helm: which objects each cluster gets, and their bodies. */
  readonly builds?: AppBuilds;
  /**
   * For an app gitfleet generates from a hosted cluster's spec.controlPlane (never a directory under
   * apps/): which hosted cluster, and whether it is the control plane in the host, a shared etcd in
   * the host, or the addons inside the hosted cluster. Only its own Placement selects it.
   */
  readonly generated?: GeneratedAppRole;
}

/** What a generated app is for. */
export interface GeneratedAppRole {
  readonly role: "control-plane" | "shared-etcd" | "addons";
  /** The hosted cluster (for a shared etcd: the etcd's name). */
  readonly for: string;
}

/**
 * What built an app's objects (kustomize or Helm): the default build and per-cluster target builds,
 * each by object identity. Clusters no target matches get the default.
 */
export interface AppBuilds {
  /** What builds the default objects, for status and plans: "kustomize apps/docs", "helm chart …". */
  readonly source: string;
  readonly defaults: ReadonlyMap<string, Resource>;
  readonly targets: readonly BuildTarget[];
  /** Objects a build made that gitfleet never applies (Helm hooks), as "Job/migrate (pre-install hook)". */
  readonly notApplied: readonly string[];
  /**
   * A digest of every input the builds read (for Helm: the chart, values and capabilities), so that a
   * change outside the app's own directory still re-renders it.
   */
  readonly inputDigest?: string;
}

/** One per-cluster build of an app: for the clusters its clusterName and clusterSelector match. */
export interface BuildTarget {
  readonly name: string;
  readonly clusterName?: string;
  readonly clusterSelector?: LabelSelector;
  /** What builds it: "kustomize apps/docs/overlays/prod (target prod)". */
  readonly source: string;
  readonly objects: ReadonlyMap<string, Resource>;
}

/** The whole fleet repo, validated. Every list is sorted by name (resources by identity). */
export interface FleetModel {
  readonly fleet: Fleet | undefined;
  readonly clusters: readonly Cluster[];
  readonly apps: readonly App[];
  readonly placements: readonly Placement[];
  readonly overrides: readonly Override[];
  readonly interpreters: readonly ResourceInterpreter[];
  readonly federatedHPAs: readonly FederatedHPA[];
  readonly cronScales: readonly CronScale[];
  readonly scaleDownRequests: readonly ScaleDownRequest[];
  readonly federatedResourceQuotas: readonly FederatedResourceQuota[];
  readonly teams: readonly Team[];
  readonly migrations: readonly Migration[];
  readonly controlPlaneClasses: readonly ControlPlaneClass[];
  readonly controlPlaneUpgrades: readonly ControlPlaneUpgrade[];
  readonly etcdRestores: readonly EtcdRestore[];
  readonly etcdMemberReplacements: readonly EtcdMemberReplacement[];
}

/** Karmada's statePreservation: labels on the replacement from the old cluster's workload status. */
export interface StatePreservation {
  readonly rules: readonly { readonly aliasLabelName: string; readonly jsonPath: string }[];
}

/** The gitfleet kinds, each with its own schema in schema/. */
export type GitfleetKind =
  | "Fleet"
  | "Cluster"
  | "App"
  | "Placement"
  | "Override"
  | "ResourceInterpreter"
  | "FederatedHPA"
  | "CronScale"
  | "ScaleDownRequest"
  | "FederatedResourceQuota"
  | "Team"
  | "Migration"
  | "ControlPlaneClass"
  | "ControlPlaneUpgrade"
  | "EtcdRestore"
  | "EtcdMemberReplacement";
