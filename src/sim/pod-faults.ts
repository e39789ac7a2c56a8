import { asMap, type JsonMap } from "../apimachinery/json.js";

/**
 * What goes wrong inside matching pods, on purpose: readiness probes that fail (the pod runs but is
 * not Ready; the kubelet records Unhealthy), or containers that crash again and again (restarts,
 * CrashLoopBackOff, the previous run's log). Set with `member.faults.podFaults([...])` or
 * `{"podFaults": [...]}` on /_gitfleet/faults; an empty list clears them.
 */
export interface PodFault {
  readonly namespace: string;
  /** matchLabels on the pods. */
  readonly selector: Readonly<Record<string, string>>;
  /** Containers with a readinessProbe fail it. */
  readonly failReadiness?: boolean;
  /** Every container exits with code 1 shortly after each start. */
  readonly crashLoop?: boolean;
}

/** The faults that apply to a pod (the last rule that names a fault wins for it). */
export function faultsOf(
  pod: JsonMap,
  faults: readonly PodFault[],
): { failReadiness: boolean; crashLoop: boolean } {
  const metadata = asMap(pod.metadata);
  const labels = asMap(metadata.labels);
  const matching = faults.filter(
    (f) =>
      f.namespace === metadata.namespace && Object.entries(f.selector).every(([k, v]) => labels[k] === v),
  );
  return {
    failReadiness: matching.some((f) => f.failReadiness === true),
    crashLoop: matching.some((f) => f.crashLoop === true),
  };
}

/** A pod fault from JSON (the faults endpoint). */
export function podFaultFrom(value: unknown): PodFault {
  const rule = asMap(value);
  const selector = Object.fromEntries(Object.entries(asMap(rule.selector)).map(([k, v]) => [k, String(v)]));
  return {
    namespace: String(rule.namespace ?? "default"),
    selector,
    ...(rule.failReadiness === true ? { failReadiness: true } : {}),
    ...(rule.crashLoop === true ? { crashLoop: true } : {}),
  };
}
