import type { HostedCredentials } from "../model/controlplane/credential-record.js";
import type { Health } from "../model/health.js";
import type { ClusterCapacity } from "../model/node-capacity.js";
import type { ServedApis } from "../model/served-apis.js";
import type { Inventory } from "./inventory.js";

/**
 * What syncing a member did, as values: per object (action, health, replicas, drift), per prune, and
 * per cluster. The sync produces them; status files, failover, rollouts, metrics and the CLI read them.
 */
export type ObjectAction =
  | "held"
  | "created"
  | "configured"
  | "unchanged"
  | "corrected"
  | "drifted"
  | "conflict"
  | "failed";

export interface ObjectResult {
  readonly identity: string;
  readonly app: string;
  readonly action: ObjectAction;
  readonly health: Health;
  /** Paths that differed from the rendered object before this sync. */
  readonly drift?: readonly string[];
  readonly error?: string;
  /** For workloads: what the rendered object asks for and what the member reports ready. */
  readonly desiredReplicas?: number;
  readonly readyReplicas?: number;
  /** For workloads short of ready replicas: their pods Pending as Unschedulable (application failover). */
  readonly unschedulableReplicas?: number;
  /** A HorizontalPodAutoscaler in the member owns the replicas: desiredReplicas is its count, not gitfleet's. */
  readonly scaledByHpa?: boolean;
  /** Why the object waits (the app's rollout has not reached this cluster, or a migration has not started there). */
  readonly held?: string;
  /** What holds it back: a rollout waits for time, a migration for a reviewed commit. */
  readonly heldBy?: Hold["by"];
  /** For a sync window's hold: when the window lets changes through (ms). */
  readonly heldUntil?: number;
  /** Pods that cannot run (CrashLoopBackOff, ImagePullBackOff, ErrImagePull; all of them past the progress deadline). */
  readonly degradedReplicas?: number;
  readonly degradedReason?: string;
  /** For a LoadBalancer Service: its ingress addresses, the cluster's entry point to it. */
  readonly entryPoint?: readonly string[];
  /** For a workload whose Placement preserves state: the labels its status gives now. */
  readonly state?: Readonly<Record<string, string>>;
  /** For a ResourceQuota: its limits and what the namespace uses, as the member counts them. */
  readonly quotaUsage?: QuotaUsage;
}

/** One ResourceQuota's reported limits and usage. */
export interface QuotaUsage {
  readonly hard: Readonly<Record<string, string>>;
  readonly used: Readonly<Record<string, string>>;
}

export type PruneOutcome = "deleted" | "gone" | "replaced" | "detached" | "prune-disabled" | "failed";

export interface PruneResult {
  readonly identity: string;
  readonly app: string;
  readonly outcome: PruneOutcome;
  readonly error?: string;
}

/** What one sync of one cluster did. */
/** A credential expiring sooner than this is reported: a member's own, or a hosted control plane's. */
export const CERTIFICATE_WARNING_MS = 14 * 24 * 3600_000;

/**
 * The credential gitfleet reaches a direct member with, as far as it says when it stops working (a
 * client certificate's notAfter, a JWT's exp): never its value, only a fingerprint of it.
 */
export interface MemberCredential {
  readonly kind: "client-certificate" | "token";
  /** When it stops working (RFC 3339, UTC). */
  readonly notAfter: string;
  /** The first 16 hex digits of its SHA-256: which credential, never the credential. */
  readonly fingerprint: string;
  /** It stops working within CERTIFICATE_WARNING_MS of the sync that read it (or already has). */
  readonly expiring: boolean;
}

export interface ClusterSyncResult {
  readonly cluster: string;
  readonly sourceCommit: string;
  readonly reachable: boolean;
  /** Why the cluster could not be synced at all. */
  readonly error?: string;
  readonly objects: readonly ObjectResult[];
  readonly pruned: readonly PruneResult[];
  readonly pruneBlocked?: {
    readonly token: string;
    readonly reasons: readonly string[];
    readonly count: number;
  };
  /** Objects that left the rendered tree but stay: their app does not prune. */
  readonly retained: readonly string[];
  readonly inventory: Inventory;
  /** The source commit prune tokens for this cluster are bound to (see prune-plan.ts). */
  readonly pruneBase?: string;
  /** The member's nodes and what its pods request, read after the sync (absent when it cannot be read). */
  readonly capacity?: ClusterCapacity;
  /** What the member serves, from its discovery (absent when it was not read). */
  readonly served?: ServedApis;
  /** The Kubernetes version the member's /version reports (absent when it was not read). */
  readonly version?: string;
  /** For a direct member: when the credential gitfleet reaches it with stops working, if it says. */
  readonly credential?: MemberCredential;
  /** The hooks of the apps' renderings and how each stands. */
  readonly hooks?: readonly HookReport[];
  /** A hook, a sync wave, a dependency or a host's node pool is in progress: the controller comes back soon. */
  readonly waiting?: boolean;
  /** For a host: the credentials of the control planes it runs, per hosted cluster, after this sync. */
  readonly credentials?: HostedCredentials;
}

/** One hook of an app's rendering in one cluster. */
export interface HookReport {
  readonly app: string;
  readonly phase: "PreSync" | "Sync" | "PostSync" | "SyncFail";
  readonly identity: string;
  readonly outcome: "Pending" | "Running" | "Succeeded" | "Failed";
  /** The source commit whose rendering the hook runs for. */
  readonly commit: string;
  readonly message?: string;
}

/**
 * Why an app (or an object) waits in a cluster, and what holds it: its rollout, a migration batch not
 * started there, a hosted control plane's upgrade order, an app it depends on, an earlier sync wave,
 * a hook, a suspend, or a sync window.
 */
export interface Hold {
  readonly reason: string;
  readonly by: HoldCause;
  /** For a sync window: when it lets changes through (ms). */
  readonly until?: number;
  /** For a sync window failover passes: objects whose replica count failover changes are applied. */
  readonly exceptScale?: boolean;
}

export type HoldCause =
  | "rollout"
  | "migration"
  | "control-plane"
  | "dependency"
  | "wave"
  | "hook"
  | "suspend"
  | "window";
