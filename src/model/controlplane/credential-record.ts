import type { PoolPlan } from "./node-pool-plan.js";

/** What happened to one credential of a hosted control plane in one pass of the credentials step. */
export type CredentialAction = "kept" | "created" | "renewed" | "reissued";

/**
 * One credential as the status branch and commit messages may speak of it: where it is, what
 * happened and why, its fingerprint and expiry — never a key or certificate body.
 */
export interface CredentialRecord {
  readonly namespace: string;
  readonly name: string;
  readonly action: CredentialAction;
  /** Why it was renewed or re-issued ("expires 2027-01-03T00:00:00.000Z", "its CA changed"). */
  readonly reason?: string;
  /** sha256 of the certificate (for a key pair: of its public key). */
  readonly fingerprint: string;
  /** When the certificate expires (ISO); absent for a key pair. */
  readonly notAfter?: string;
}

/** What the serving-certificate rule did with one pending kubelet serving CSR of a hosted cluster. */
export interface ServingCsrRecord {
  readonly csr: string;
  /** The node it asks for, when it names one. */
  readonly node?: string;
  readonly approved: boolean;
  /** Why it is left pending. */
  readonly reason?: string;
  /** Pending and asked for lately: the host is looked at again soon, when it may be approved. */
  readonly recent?: boolean;
}

/** One node pool's pass: where its upgrade and repair stand (the plan's view), and what the pass did. */
export interface NodePoolRecord extends Omit<PoolPlan, "actions" | "target"> {
  /** The kubelet version the pool moves to. */
  readonly kubeletVersion: string;
  /** What this pass did, by node. */
  readonly cordoned: readonly string[];
  readonly told: readonly string[];
  readonly uncordoned: readonly string[];
  readonly removed: readonly { readonly node: string; readonly notReadyForMs: number }[];
  /** Actions that failed (the next pass tries again). */
  readonly errors: readonly string[];
}

/** One etcd member as the host's pass saw it. */
export interface EtcdMemberRecord {
  readonly ready: boolean;
  /** Since when it has been NotReady (ISO), when it is. */
  readonly notReadySince?: string;
  readonly id?: string;
  readonly leader?: boolean;
  readonly dbSize?: number;
  readonly dbInUse?: number;
  readonly quota?: number;
  readonly alarm?: string;
}

/** A replicated etcd's pass: its members, a replacement under way, and what the pass did. */
export interface EtcdRecord {
  /** "<namespace>/<name>". */
  readonly etcd: string;
  readonly members: Readonly<Record<string, EtcdMemberRecord>>;
  readonly replacing?: { readonly member: string; readonly step: string };
  readonly held?: string;
  /** The EtcdMemberReplacements of this etcd, by name: Done, Replacing or Waiting. */
  readonly requests?: Readonly<Record<string, "Done" | "Replacing" | "Waiting">>;
  /** A NOSPACE alarm's clearing: its step, or why the alarm stays. */
  readonly alarm?: { readonly clearing?: string; readonly held?: string };
  /** What this pass did, one line each ("removed etcd-1 (member 4036b1db24775ea0) from the etcd"). */
  readonly did: readonly string[];
  /** Actions that failed (the next pass tries again). */
  readonly errors: readonly string[];
  /** A replacement is under way or a member is NotReady: look again soon. */
  readonly moving: boolean;
}

/** Per hosted cluster, its credentials in its host as the last pass left them, or why the pass failed. */
export type HostedCredentials = Readonly<
  Record<
    string,
    | {
        readonly records: readonly CredentialRecord[];
        /** Why the node pools' join tokens could not be brought up to date (the credentials were). */
        readonly joinError?: string;
        /** Why the off-host backup store could not be given to the backup Job (the credentials were). */
        readonly backupStoreError?: string;
        /** An off-host restore that is Fetching: the backup whose keys are back and snapshot staged. */
        readonly restoreFetch?: { readonly restore: string; readonly fetched: string };
        /** Kubelet serving CSRs the pass approved, and those it left pending with the reason. */
        readonly servingCsrs?: readonly ServingCsrRecord[];
        /** The node pools' upgrades and repairs. */
        readonly nodePools?: readonly NodePoolRecord[];
        /** Its etcd's members and repair, when the etcd is replicated. */
        readonly etcd?: EtcdRecord;
        /** Component pods deleted to start again on CAs replaced for replaceCAs (they held the old ones). */
        readonly restarted?: readonly string[];
      }
    | { readonly error: string }
  >
>;
