import type { JsonMap } from "../apimachinery/json.js";

// A Deployment's Progressing condition as the deployment controller keeps it: True with
// NewReplicaSetAvailable once a rollout is complete; True with ReplicaSetUpdated, its lastUpdateTime
// moved forward, whenever the rollout made progress; False with ProgressDeadlineExceeded when a
// rollout made none for spec.progressDeadlineSeconds (default 600). A complete rollout never times
// out later, even when pods are lost — as in Kubernetes. Pure.

/** The counts one status pass compares with the last. */
export interface RolloutCounts {
  readonly replicas: number;
  readonly updatedReplicas: number;
  readonly readyReplicas: number;
  readonly availableReplicas: number;
}

export interface ProgressInput {
  /** The Progressing condition the Deployment has now, if any. */
  readonly current: JsonMap | undefined;
  readonly before: RolloutCounts;
  readonly after: RolloutCounts;
  readonly desired: number;
  /** The spec changed since the last status (a new generation): a rollout starts. */
  readonly newGeneration: boolean;
  readonly deadlineSeconds: number;
  readonly replicaSetName: string;
  /** Milliseconds since the epoch. */
  readonly now: number;
}

export interface ProgressOutcome {
  readonly condition: JsonMap;
  /** When the deadline runs out if nothing progresses before (ms), for a pass then. */
  readonly deadlineAt?: number;
}

export const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;

/** The next Progressing condition. */
export function progressCondition(input: ProgressInput): ProgressOutcome {
  const { current, after, desired, now } = input;
  const at = seconds(now);
  const complete =
    after.updatedReplicas === desired && after.replicas === desired && after.availableReplicas === desired;
  if (complete)
    return {
      condition: keepIfSame(current, {
        type: "Progressing",
        status: "True",
        reason: "NewReplicaSetAvailable",
        message: `ReplicaSet "${input.replicaSetName}" has successfully progressed.`,
        lastUpdateTime: at,
        lastTransitionTime: at,
      }),
    };
  if (input.newGeneration || progressed(input.before, after)) {
    const condition = {
      type: "Progressing",
      status: "True",
      reason: "ReplicaSetUpdated",
      message: `ReplicaSet "${input.replicaSetName}" is progressing.`,
      lastUpdateTime: at,
      lastTransitionTime: current?.status === "True" ? String(current.lastTransitionTime ?? at) : at,
    };
    return { condition, deadlineAt: deadline(at, input.deadlineSeconds) };
  }
  if (current === undefined || current.reason === "NewReplicaSetAvailable")
    return current === undefined ? { condition: progressingNow(input, at) } : { condition: current };
  if (current.reason === "ProgressDeadlineExceeded") return { condition: current };
  const due = deadline(String(current.lastUpdateTime ?? at), input.deadlineSeconds);
  if (now < due) return { condition: current, deadlineAt: due };
  return {
    condition: {
      type: "Progressing",
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: `ReplicaSet "${input.replicaSetName}" has timed out progressing.`,
      lastUpdateTime: at,
      lastTransitionTime: at,
    },
  };
}

function progressingNow(input: ProgressInput, at: string): JsonMap {
  return {
    type: "Progressing",
    status: "True",
    reason: "ReplicaSetUpdated",
    message: `ReplicaSet "${input.replicaSetName}" is progressing.`,
    lastUpdateTime: at,
    lastTransitionTime: at,
  };
}

// More updated, ready or available replicas, or fewer old ones, than the last pass saw.
function progressed(before: RolloutCounts, after: RolloutCounts): boolean {
  const old = (c: RolloutCounts) => c.replicas - c.updatedReplicas;
  return (
    after.updatedReplicas > before.updatedReplicas ||
    old(after) < old(before) ||
    after.readyReplicas > before.readyReplicas ||
    after.availableReplicas > before.availableReplicas
  );
}

// The same status and reason keep their times, as the controller leaves such a condition alone.
function keepIfSame(current: JsonMap | undefined, next: JsonMap): JsonMap {
  return current !== undefined && current.status === next.status && current.reason === next.reason
    ? current
    : next;
}

function deadline(lastUpdate: string, deadlineSeconds: number): number {
  return Date.parse(lastUpdate) + deadlineSeconds * 1000;
}

// Conditions carry whole seconds (RFC 3339), as the API server stores metav1.Time.
function seconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}
