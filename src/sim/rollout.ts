/** One ReplicaSet as the rollout sees it. */
export interface RolloutSet {
  readonly name: string;
  readonly replicas: number;
  readonly available: number;
}

/** A Deployment's rollout settings, resolved against its replica count. */
export interface RolloutPolicy {
  readonly desired: number;
  readonly strategy: "RollingUpdate" | "Recreate";
  readonly maxSurge: number;
  readonly maxUnavailable: number;
}

/**
 * Resolves `maxSurge` and `maxUnavailable` (a count or a percentage of the desired replicas, 25% by
 * default): surge rounds up, unavailability down, and both zero means one may be unavailable — as the
 * Deployment controller does.
 */
export function rolloutPolicy(spec: { replicas?: unknown; strategy?: unknown }): RolloutPolicy {
  const desired = typeof spec.replicas === "number" ? spec.replicas : 1;
  const strategy = (spec.strategy ?? {}) as {
    type?: unknown;
    rollingUpdate?: { maxSurge?: unknown; maxUnavailable?: unknown };
  };
  const resolve = (value: unknown, round: (n: number) => number) => {
    const given = value ?? "25%";
    if (typeof given === "number") return given;
    const percent = /^(\d+)%$/.exec(String(given));
    return percent ? round((desired * Number(percent[1])) / 100) : Number(given) || 0;
  };
  const maxSurge = resolve(strategy.rollingUpdate?.maxSurge, Math.ceil);
  const unavailable = resolve(strategy.rollingUpdate?.maxUnavailable, Math.floor);
  return {
    desired,
    strategy: strategy.type === "Recreate" ? "Recreate" : "RollingUpdate",
    maxSurge,
    maxUnavailable: maxSurge === 0 && unavailable === 0 ? 1 : unavailable,
  };
}

/**
 * One step of a rollout: how many replicas the new ReplicaSet and each old one should have now.
 * RollingUpdate grows the new set while the total stays within desired + maxSurge, and shrinks old
 * sets — unavailable pods first — while at least desired − maxUnavailable stay available. Recreate
 * empties the old sets before the new one grows. Pure; called again as pods become available.
 */
export function rolloutStep(
  policy: RolloutPolicy,
  next: RolloutSet,
  old: readonly RolloutSet[],
): { readonly next: number; readonly old: ReadonlyMap<string, number> } {
  const oldReplicas = old.reduce((sum, set) => sum + set.replicas, 0);
  if (policy.strategy === "Recreate") {
    const oldRunning = old.reduce((sum, set) => sum + set.replicas, 0);
    return { next: oldRunning > 0 ? 0 : policy.desired, old: new Map(old.map((set) => [set.name, 0])) };
  }
  if (old.length === 0) return { next: policy.desired, old: new Map() };
  const room = policy.desired + policy.maxSurge - (next.replicas + oldReplicas);
  const grown = Math.min(policy.desired, next.replicas + Math.max(0, room));
  let removable =
    next.available +
    old.reduce((sum, set) => sum + set.available, 0) -
    (policy.desired - policy.maxUnavailable);
  const scaled = new Map<string, number>();
  for (const set of old) {
    let replicas = set.replicas - (set.replicas - set.available);
    const fromAvailable = Math.min(replicas, Math.max(0, removable));
    replicas -= fromAvailable;
    removable -= fromAvailable;
    scaled.set(set.name, Math.max(0, replicas));
  }
  return { next: grown, old: scaled };
}
