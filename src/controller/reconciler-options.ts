import type { Logger } from "pino";
import type { KustomizeBuilder } from "../builds/kustomize-builder.js";
import type { CommitVerifier } from "../git/commit-verifier.js";
import type { FleetRepo } from "../git/fleet-repo.js";
import type { ChartRenderer } from "../helm/chart-renderer.js";
import type { LoadPolicy } from "../model/load-policy.js";
import type { ObservedState } from "../model/observed-state.js";
import type { EventKind } from "../model/trailers.js";
import type { Recomputed } from "../reconcile/recomputed.js";
import type { SnapshotStore } from "./snapshot/snapshot-store.js";

// What a reconciler is given and what it tells: its options, its report of a reconcile, the
// commits it published and the files the controller attaches to its next commit.

/** How the loop reaches Git and signs its work. */
export interface ReconcilerOptions {
  readonly repo: FleetRepo;
  /** The branch people commit intent to. */
  readonly branch: string;
  /** The branch gitfleet writes rendered/ and status/ to. */
  readonly statusBranch: string;
  readonly author: { readonly name: string; readonly email: string };
  /** Names this controller in the `Gitfleet-Controller` trailer of its commits. */
  readonly controllerId: string;
  readonly logger: Logger;
  /** Tries to publish a status commit before giving up when other writers keep moving the branch. Default 6. */
  readonly maxAttempts?: number;
  /** The key of Secrets' value digests in rendered/ (the operator's; see render/secrets.ts). */
  readonly secretDigestKey?: Uint8Array;
  /** Renders Helm apps' charts (default: helm from the environment, see helm/helm-environment.ts). */
  readonly charts?: ChartRenderer;
  /** Builds Kustomize apps off the event loop (default: the process's build worker). */
  readonly kustomize?: KustomizeBuilder;
  /** What the operator bounds and allows in what the fleet repo builds (default: the process's, helm/build-settings.ts). */
  readonly policy?: LoadPolicy;
  /** Signs status commits when given (isomorphic-git's onSign). */
  readonly sign?: (payload: string) => Promise<string>;
  /**
   * Checks a status commit's signature against the trusted keys. With it, a tip that verifies is
   * restored as it is; without it (no signing configured) or for a tip that does not verify, the
   * state is rebuilt by rendering the source again (see reconcile/rebuild-state.ts).
   */
  readonly verify?: CommitVerifier;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
  /** Waits between attempts; injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Told as a reconcile finishes each stage (fetch, restore, read, reconcile, write, publish): progress output. */
  readonly onProgress?: (stage: string) => void;
  /** Told of the source branch's tip at the start of each reconcile, before it is reconciled (commit statuses' pending). */
  readonly onSource?: (sourceCommit: string) => void;
  /** Called after every status commit this reconciler published, with its message and the kinds of event it records. */
  readonly onCommit?: (commit: PublishedCommit) => void;
  /**
   * Checked right before the status branch moves: throws when this process may not write (a standby,
   * or a leader whose Lease ran out — see kube/leader-lease.ts). The branch's compare-and-swap stays
   * the last line of defence.
   */
  readonly fence?: () => void;
  /**
   * Where the reconciler keeps its snapshot (snapshot/): read by the first restore, so a restarted
   * process resumes from it, and written `snapshotAfterMs` (default 60 s) after the held tip moves.
   */
  readonly snapshots?: SnapshotStore;
  readonly snapshotAfterMs?: number;
  /** Called after a stage of the publish, for crash tests: "written" (objects on disk, branch not moved) or "published". */
  readonly onStage?: (stage: "written" | "published") => void | Promise<void>;
}

/** A status commit this reconciler published: its id, its message, the kinds of event it records (the trailer's first). */
export interface PublishedCommit {
  readonly oid: string;
  readonly message: string;
  readonly kinds: readonly EventKind[];
}

export interface ReconcileReport {
  /** up-to-date: the source commit was reconciled already (and no observation moved anything); committed: a status commit was published. */
  readonly result: "up-to-date" | "committed" | "unchanged";
  readonly sourceCommit: string;
  readonly statusCommit: string | undefined;
  readonly valid: boolean;
  readonly errors: number;
  /** The first error of an invalid source commit, with its file and line (when this reconcile found it). */
  readonly firstError?: string;
  readonly attempts: number;
  /** Files changed on the status branch. */
  readonly filesChanged: number;
  /** Milliseconds per stage: fetch, restore, read, reconcile, write, publish. */
  readonly durationsMs: Readonly<Record<string, number>>;
  /** What the reconcile parsed and rendered again: files, apps and (app, cluster) pairs. */
  readonly recomputed?: Recomputed;
}

/** Files besides the render that the next status commit carries (status/autoscaling/), and why they changed. */
export interface Attachment {
  /** Only the files that differ from the branch (null deletes). */
  readonly files: ReadonlyMap<string, string | null>;
  /** Lines for the commit message. */
  readonly notes: readonly string[];
  /** Called once a commit carrying them landed. */
  readonly committed: () => void;
}

/**
 * What the controller's round hands a reconcile (and a standby's follow): where the render's
 * observations come from — asked for once the state is restored, so they are gathered for the state
 * the render starts from — and the files its commit carries besides the render.
 */
export interface RoundInputs {
  /**
   * Cluster conditions, workloads' replicas, the time: the render takes them in, and a change that
   * moves replicas is reconciled even when the source branch did not move. Without it (no sync),
   * the render takes the time only.
   */
  readonly observe?: () => ObservedState;
  /** The files kept on the status branch besides the render (the autoscalers'), given the branch's. */
  readonly attach?: (syncFiles: ReadonlyMap<string, string>) => Attachment;
}
