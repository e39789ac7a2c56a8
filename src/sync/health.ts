import { asList, asMap, type JsonMap, valueAt } from "../apimachinery/json.js";
import { groupKind, groupOf } from "../apimachinery/kinds.js";
import type { Health, HealthStatus } from "../model/health.js";
import type { HealthOperator, ResourceInterpreterSpec } from "../model/types.js";

const HEALTHY: Health = { status: "Healthy" };

/** Worse states sort later: an app is as healthy as its least healthy object. */
const SEVERITY: Record<HealthStatus, number> = {
  Healthy: 0,
  Progressing: 1,
  Unknown: 2,
  Missing: 3,
  Degraded: 4,
};

/** The least healthy of several, the first one given on a tie; Healthy for none. */
export function worstHealth(healths: Iterable<Health>): Health {
  let worst = HEALTHY;
  for (const health of healths) if (SEVERITY[health.status] > SEVERITY[worst.status]) worst = health;
  return worst;
}

type Rule = (live: JsonMap) => Health;

/**
 * The health of a live object by the built-in rules for its kind (the way `kubectl rollout status`
 * and Argo CD judge them), or by a ResourceInterpreter's health rules for a custom kind; any other
 * kind by the kstatus conventions (observedGeneration, Reconciling, Stalled, Ready), as Flux judges
 * custom resources: Healthy once it exists when it reports none of them. Pure.
 */
export function assessHealth(
  live: JsonMap | undefined,
  interpreter?: Pick<ResourceInterpreterSpec, "health" | "statusPaths">,
): Health {
  if (!live) return { status: "Missing", reason: "not found in the cluster" };
  const metadata = asMap(live.metadata);
  if (metadata.deletionTimestamp !== undefined) return { status: "Progressing", reason: "being deleted" };
  const rule = BUILT_IN[groupKind(groupOf(String(live.apiVersion ?? "")), String(live.kind))];
  if (rule) return rule(live);
  if (interpreter?.health || interpreter?.statusPaths?.observedGeneration)
    return interpretedHealth(live, interpreter);
  return conventionalHealth(live);
}

/**
 * The kstatus conventions for a kind no rule knows: a status.observedGeneration behind
 * metadata.generation is Progressing; Reconciling=True is Progressing; Stalled=True is Degraded; a
 * Ready condition decides the rest (False Degraded, Unknown or observed for an older generation
 * Progressing); no condition at all is Healthy.
 */
export function conventionalHealth(live: JsonMap): Health {
  const generation = asMap(live.metadata).generation;
  const observed = asMap(live.status).observedGeneration;
  if (typeof generation === "number" && typeof observed === "number" && observed < generation)
    return {
      status: "Progressing",
      reason: `generation ${generation} not observed yet (observed ${observed})`,
    };
  const reconciling = condition(live, "Reconciling");
  if (reconciling?.status === "True")
    return { status: "Progressing", reason: said("reconciling", reconciling) };
  const stalled = condition(live, "Stalled");
  if (stalled?.status === "True") return { status: "Degraded", reason: said("stalled", stalled) };
  const ready = condition(live, "Ready");
  return ready ? readyHealth(ready, generation) : HEALTHY;
}

// A Ready condition: True Healthy, False Degraded, Unknown (or one for an older generation) Progressing.
function readyHealth(ready: JsonMap, generation: unknown): Health {
  const stale =
    typeof generation === "number" &&
    typeof ready.observedGeneration === "number" &&
    ready.observedGeneration < generation;
  if (stale) return { status: "Progressing", reason: "Ready was reported for an older generation" };
  if (ready.status === "True") return HEALTHY;
  if (ready.status === "False") return { status: "Degraded", reason: said("not ready", ready) };
  return { status: "Progressing", reason: said("readiness unknown", ready) };
}

// "stalled: InstallFailed: chart not found": what a condition says, after what it means.
function said(what: string, c: JsonMap): string {
  const words = [c.reason, c.message].filter((v) => typeof v === "string" && v !== "").join(": ");
  return words ? `${what}: ${words}` : what;
}

const BUILT_IN: Record<string, Rule> = {
  "apps/Deployment": deploymentHealth,
  "apps/StatefulSet": statefulSetHealth,
  "apps/DaemonSet": daemonSetHealth,
  "apps/ReplicaSet": replicaSetHealth,
  "batch/Job": jobHealth,
  "/Pod": podHealth,
  "/PersistentVolumeClaim": pvcHealth,
  "/Service": serviceHealth,
  "/Namespace": namespaceHealth,
  "apiextensions.k8s.io/CustomResourceDefinition": crdHealth,
  "multicluster.x-k8s.io/ServiceExport": serviceExportHealth,
};

const num = (value: unknown): number => (typeof value === "number" ? value : 0);

function condition(live: JsonMap, type: string): JsonMap | undefined {
  return asList(asMap(live.status).conditions)
    .map((c) => asMap(c))
    .find((c) => c.type === type);
}

// The controller has not seen the latest spec yet: nothing else in status can be trusted.
function unobserved(live: JsonMap): Health | undefined {
  const generation = asMap(live.metadata).generation;
  const observed = asMap(live.status).observedGeneration;
  if (typeof generation === "number" && (typeof observed !== "number" || observed < generation))
    return { status: "Progressing", reason: "waiting for the controller to observe the new generation" };
  return undefined;
}

function deploymentHealth(live: JsonMap): Health {
  const pending = unobserved(live);
  if (pending) return pending;
  const status = asMap(live.status);
  const progressing = condition(live, "Progressing");
  if (progressing?.reason === "ProgressDeadlineExceeded")
    return { status: "Degraded", reason: `progress deadline exceeded: ${String(progressing.message ?? "")}` };
  const wanted = typeof asMap(live.spec).replicas === "number" ? num(asMap(live.spec).replicas) : 1;
  const updated = num(status.updatedReplicas);
  if (updated < wanted) return { status: "Progressing", reason: `${updated} of ${wanted} replicas updated` };
  if (num(status.replicas) > updated)
    return {
      status: "Progressing",
      reason: `${num(status.replicas) - updated} old replicas pending termination`,
    };
  const available = num(status.availableReplicas);
  if (available < updated)
    return { status: "Progressing", reason: `${available} of ${updated} updated replicas available` };
  return HEALTHY;
}

function statefulSetHealth(live: JsonMap): Health {
  const pending = unobserved(live);
  if (pending) return pending;
  const status = asMap(live.status);
  const spec = asMap(live.spec);
  const wanted = typeof spec.replicas === "number" ? spec.replicas : 1;
  const ready = num(status.readyReplicas);
  if (ready < wanted) return { status: "Progressing", reason: `${ready} of ${wanted} replicas ready` };
  if (asMap(spec.updateStrategy).type === "OnDelete") return HEALTHY;
  const partition = num(asMap(asMap(spec.updateStrategy).rollingUpdate).partition);
  const updated = num(status.updatedReplicas);
  if (updated < wanted - partition)
    return { status: "Progressing", reason: `${updated} of ${wanted - partition} replicas updated` };
  if (
    partition === 0 &&
    status.updateRevision !== undefined &&
    status.currentRevision !== status.updateRevision
  )
    return { status: "Progressing", reason: "rolling update in progress" };
  return HEALTHY;
}

function daemonSetHealth(live: JsonMap): Health {
  const pending = unobserved(live);
  if (pending) return pending;
  const status = asMap(live.status);
  const desired = num(status.desiredNumberScheduled);
  const updated = num(status.updatedNumberScheduled);
  if (updated < desired) return { status: "Progressing", reason: `${updated} of ${desired} nodes updated` };
  const available = num(status.numberAvailable);
  if (available < desired)
    return { status: "Progressing", reason: `${available} of ${desired} nodes available` };
  return HEALTHY;
}

function replicaSetHealth(live: JsonMap): Health {
  const pending = unobserved(live);
  if (pending) return pending;
  const failure = condition(live, "ReplicaFailure");
  if (failure?.status === "True")
    return { status: "Degraded", reason: `replica failure: ${String(failure.message ?? "")}` };
  const wanted = typeof asMap(live.spec).replicas === "number" ? num(asMap(live.spec).replicas) : 1;
  const available = num(asMap(live.status).availableReplicas);
  if (available < wanted)
    return { status: "Progressing", reason: `${available} of ${wanted} replicas available` };
  return HEALTHY;
}

function jobHealth(live: JsonMap): Health {
  const failed = condition(live, "Failed");
  if (failed?.status === "True")
    return { status: "Degraded", reason: `job failed: ${String(failed.reason ?? "")}` };
  const complete = condition(live, "Complete");
  if (complete?.status === "True") return HEALTHY;
  const suspended = condition(live, "Suspended");
  if (suspended?.status === "True") return { status: "Progressing", reason: "suspended" };
  return { status: "Progressing", reason: `${num(asMap(live.status).succeeded)} completions so far` };
}

// A bare Pod: done or running and ready is Healthy; a failed one Degraded; the rest on its way.
function podHealth(live: JsonMap): Health {
  const phase = asMap(live.status).phase;
  if (phase === "Succeeded") return HEALTHY;
  if (phase === "Failed")
    return { status: "Degraded", reason: `pod failed: ${String(asMap(live.status).reason ?? "")}` };
  if (phase === "Running" && condition(live, "Ready")?.status === "True") return HEALTHY;
  return { status: "Progressing", reason: `pod ${String(phase ?? "Pending")}` };
}

function pvcHealth(live: JsonMap): Health {
  const phase = asMap(live.status).phase;
  if (phase === "Bound") return HEALTHY;
  if (phase === "Lost") return { status: "Degraded", reason: "the claim lost its volume" };
  return { status: "Progressing", reason: `claim ${String(phase ?? "Pending")}` };
}

function serviceHealth(live: JsonMap): Health {
  if (asMap(live.spec).type !== "LoadBalancer") return HEALTHY;
  const ingress = asList(asMap(asMap(live.status).loadBalancer).ingress);
  return ingress.length > 0
    ? HEALTHY
    : { status: "Progressing", reason: "waiting for a load balancer address" };
}

// A ServiceExport as an MCS implementation reports it (KEP-1645): a Conflict or an Invalid export
// is Degraded, one not Ready yet Progressing; without an implementation's conditions it is Healthy
// once it exists (the endpoints and dns modes need none).
function serviceExportHealth(live: JsonMap): Health {
  const conflict = condition(live, "Conflict");
  if (conflict?.status === "True") return { status: "Degraded", reason: said("export conflict", conflict) };
  const valid = condition(live, "Valid");
  if (valid?.status === "False") return { status: "Degraded", reason: said("export invalid", valid) };
  const ready = condition(live, "Ready");
  if (ready?.status === "False") return { status: "Progressing", reason: said("export not ready", ready) };
  return HEALTHY;
}

function namespaceHealth(live: JsonMap): Health {
  const phase = asMap(live.status).phase;
  return phase === "Terminating" ? { status: "Progressing", reason: "terminating" } : HEALTHY;
}

function crdHealth(live: JsonMap): Health {
  const names = condition(live, "NamesAccepted");
  if (names?.status === "False")
    return { status: "Degraded", reason: `names not accepted: ${String(names.message ?? "")}` };
  return condition(live, "Established")?.status === "True"
    ? HEALTHY
    : { status: "Progressing", reason: "not established yet" };
}

// A custom kind taught by a ResourceInterpreter: observedGeneration, the ready condition, then each rule.
function interpretedHealth(
  live: JsonMap,
  interpreter: Pick<ResourceInterpreterSpec, "health" | "statusPaths">,
): Health {
  const observedPath = interpreter.statusPaths?.observedGeneration;
  const generation = asMap(live.metadata).generation;
  if (observedPath && typeof generation === "number") {
    const observed = valueAt(live, observedPath.split("."));
    if (typeof observed !== "number" || observed < generation)
      return { status: "Progressing", reason: "waiting for the controller to observe the new generation" };
  }
  const ready = interpreter.health?.readyCondition;
  const found = ready ? condition(live, ready.type) : undefined;
  if (ready && found?.status !== (ready.status ?? "True"))
    return {
      status: "Progressing",
      reason: `condition ${ready.type} is ${String(found?.status ?? "absent")}`,
    };
  for (const rule of interpreter.health?.rules ?? []) {
    const failed = failedRule(live, rule);
    if (failed) return { status: "Progressing", reason: failed };
  }
  return HEALTHY;
}

type HealthRule = NonNullable<NonNullable<ResourceInterpreterSpec["health"]>["rules"]>[number];

function failedRule(live: JsonMap, rule: HealthRule): string | undefined {
  const actual = valueAt(live, rule.field.split("."));
  const expected = rule.valueFrom === undefined ? rule.value : valueAt(live, rule.valueFrom.split("."));
  if (holds(rule.operator, actual, expected)) return undefined;
  return `${rule.field} is ${JSON.stringify(actual ?? null)}, wants ${rule.operator} ${JSON.stringify(expected ?? null)}`;
}

function holds(operator: HealthOperator, actual: unknown, expected: unknown): boolean {
  if (operator === "Equal") return actual === expected;
  if (operator === "NotEqual") return actual !== expected;
  if (typeof actual !== "number" || typeof expected !== "number") return false;
  if (operator === "GreaterThanOrEqual") return actual >= expected;
  if (operator === "GreaterThan") return actual > expected;
  if (operator === "LessThanOrEqual") return actual <= expected;
  return actual < expected;
}
