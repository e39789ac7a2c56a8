import { parseDuration } from "../model/duration.js";
import type { TimedTaint } from "../model/observed-state.js";
import type { FleetSpec } from "../model/types.js";
import { NOT_READY_TAINT, UNREACHABLE_TAINT } from "../schedule/plugins/taint-toleration.js";

/** How probes turn into a cluster's condition (fleet.yaml spec.clusterHealth). */
export interface ClusterHealthSettings {
  readonly probeIntervalMs: number;
  readonly probeTimeoutMs: number;
  /** Consecutive failed probes before a Ready cluster is NotReady. */
  readonly failureThreshold: number;
  /** Consecutive good probes before a NotReady cluster is Ready again. */
  readonly successThreshold: number;
  /** How long a cluster stays NotReady (NoSchedule) before its taint also says NoExecute. */
  readonly noExecuteAfterMs: number;
}

export const DEFAULT_CLUSTER_HEALTH: ClusterHealthSettings = {
  probeIntervalMs: 10_000,
  probeTimeoutMs: 5_000,
  failureThreshold: 3,
  successThreshold: 3,
  noExecuteAfterMs: 60_000,
};

/** fleet.yaml's clusterHealth with the defaults filled in. */
export function clusterHealthSettings(spec: FleetSpec | undefined): ClusterHealthSettings {
  const given = spec?.clusterHealth ?? {};
  const duration = (text: string | undefined, fallback: number) =>
    text ? (parseDuration(text) ?? fallback) : fallback;
  return {
    probeIntervalMs: duration(given.probeInterval, DEFAULT_CLUSTER_HEALTH.probeIntervalMs),
    probeTimeoutMs: duration(given.probeTimeout, DEFAULT_CLUSTER_HEALTH.probeTimeoutMs),
    failureThreshold: given.failureThreshold ?? DEFAULT_CLUSTER_HEALTH.failureThreshold,
    successThreshold: given.successThreshold ?? DEFAULT_CLUSTER_HEALTH.successThreshold,
    noExecuteAfterMs: duration(given.noExecuteAfter, DEFAULT_CLUSTER_HEALTH.noExecuteAfterMs),
  };
}

/** One probe of a member's /readyz. */
export interface Probe {
  /** Milliseconds since the epoch. */
  readonly at: number;
  /** ready: answered 200; unready: answered otherwise; unreachable: no answer (refused, timed out). */
  readonly outcome: "ready" | "unready" | "unreachable";
  readonly error?: string;
}

/** A cluster's condition as the probes have established it. */
export interface ClusterHealth {
  readonly ready: boolean;
  /** Why it is NotReady: the member answered unready, or did not answer at all. */
  readonly reason?: "NotReady" | "Unreachable";
  /** When the condition last changed (ms since the epoch). */
  readonly since: number;
  readonly failures: number;
  readonly successes: number;
  readonly lastError?: string;
}

/** A cluster nobody has probed yet counts as Ready: what the fleet repo says is trusted until a probe says otherwise. */
export function initialHealth(now: number): ClusterHealth {
  return { ready: true, since: now, failures: 0, successes: 0 };
}

/**
 * The condition after one more probe, with hysteresis: a Ready cluster becomes NotReady only after
 * `failureThreshold` failures in a row, a NotReady one Ready only after `successThreshold` successes
 * in a row, so a flapping member does not flip the condition on every probe. Pure.
 */
export function afterProbe(
  health: ClusterHealth,
  probe: Probe,
  settings: ClusterHealthSettings,
): ClusterHealth {
  if (probe.outcome === "ready") {
    const successes = health.successes + 1;
    if (!health.ready && successes >= settings.successThreshold)
      return { ready: true, since: probe.at, failures: 0, successes };
    return { ...health, failures: 0, successes };
  }
  const failures = health.failures + 1;
  const reason = probe.outcome === "unreachable" ? "Unreachable" : "NotReady";
  const failed = { ...health, failures, successes: 0, ...(probe.error ? { lastError: probe.error } : {}) };
  if (health.ready && failures >= settings.failureThreshold)
    return { ...failed, ready: false, reason, since: probe.at };
  return health.ready ? failed : { ...failed, reason };
}

/**
 * The taints a cluster's condition adds: none while Ready; NoSchedule once NotReady, and NoExecute
 * as well once it has been NotReady for `noExecuteAfterMs` — the grace period before its workloads
 * are moved. The key says whether the member answered unready or not at all. Pure.
 */
export function healthTaints(
  health: ClusterHealth,
  now: number,
  settings: ClusterHealthSettings,
): TimedTaint[] {
  if (health.ready) return [];
  const key = health.reason === "Unreachable" ? UNREACHABLE_TAINT : NOT_READY_TAINT;
  const taints: TimedTaint[] = [{ key, effect: "NoSchedule", addedAt: health.since }];
  const noExecuteAt = health.since + settings.noExecuteAfterMs;
  if (now >= noExecuteAt) taints.push({ key, effect: "NoExecute", addedAt: noExecuteAt });
  return taints;
}

/**
 * A condition as status/clusters/<cluster>.yaml records it (`observed.condition`), back as health: a
 * NotReady cluster counts as having failed enough probes, so it stays NotReady until it has answered
 * `successThreshold` times. Undefined when there is no readable condition.
 */
export function recordedHealth(
  condition: unknown,
  settings: ClusterHealthSettings,
): ClusterHealth | undefined {
  if (typeof condition !== "object" || condition === null) return undefined;
  const { ready, reason, since, lastError } = condition as Record<string, unknown>;
  const at = typeof since === "string" ? Date.parse(since) : Number.NaN;
  if (typeof ready !== "boolean" || Number.isNaN(at)) return undefined;
  if (ready) return { ready, since: at, failures: 0, successes: settings.successThreshold };
  return {
    ready,
    since: at,
    reason: reason === "NotReady" ? "NotReady" : "Unreachable",
    failures: settings.failureThreshold,
    successes: 0,
    ...(typeof lastError === "string" ? { lastError } : {}),
  };
}
