import { createHash } from "node:crypto";
import { asMap, type JsonMap, valueAt } from "../../apimachinery/json.js";
import { timestamp } from "../api/helpers.js";
import { type RolloutSet, rolloutPolicy, rolloutStep } from "../rollout.js";
import { compareNames, isReady, ownerReference, sameJson, templateHash } from "./objects.js";
import type { CustomWorkload, WorldContext } from "./world-context.js";
/** A declared custom workload (an OpenKruise CloneSet): pods from its template, podsToDelete first. */
export function syncCustom(world: WorldContext, object: JsonMap, workload: CustomWorkload): void {
  const metadata = asMap(object.metadata);
  const replicas = valueAt(object, workload.replicasPath.split("."));
  const template = asMap(valueAt(object, workload.podTemplatePath.split(".")));
  const want = typeof replicas === "number" ? replicas : 1;
  const owner = { ...object, spec: { template } };
  // As OpenKruise does: the pods named in podsToDelete go (replaced if replicas did not drop).
  const named = workload.podsToDeletePath ? valueAt(object, workload.podsToDeletePath.split(".")) : undefined;
  const doomed = new Set(Array.isArray(named) ? named.map(String) : []);
  if (doomed.size > 0) {
    for (const pod of world.ownedBy(`/api/v1/namespaces/${String(metadata.namespace)}/pods`, metadata))
      if (doomed.has(String(asMap(pod.metadata).name)) && !asMap(pod.metadata).deletionTimestamp)
        world.remove(pod, "/api/v1", "pods");
  }
  ensurePods(
    world,
    owner,
    workload.kind,
    want,
    (i) => {
      const seed = `${String(metadata.uid)}/${world.api.store.currentVersion()}/${i}`;
      return `${String(metadata.name)}-${createHash("sha256").update(seed).digest("hex").slice(0, 5)}`;
    },
    true,
    String(object.apiVersion),
    doomed,
  );
}

/** The Job controller's status: active, succeeded, ready, Complete once enough pods succeeded. */
export function updateJobStatus(world: WorldContext, job: JsonMap): void {
  const metadata = asMap(job.metadata);
  const pods = world.ownedBy(`/api/v1/namespaces/${String(metadata.namespace)}/pods`, metadata);
  const succeeded = pods.filter((p) => asMap(p.status).phase === "Succeeded").length;
  const failed = pods.filter((p) => asMap(p.status).phase === "Failed").length;
  const complete = succeeded >= Number(asMap(job.spec).completions ?? 1);
  const gaveUp = !complete && failed > backoffLimitOf(job);
  const before = asMap(job.status);
  const now = timestamp(world.api.now());
  const status = {
    active: gaveUp ? 0 : pods.length - succeeded - failed,
    succeeded,
    ...(failed > 0 ? { failed } : {}),
    ready: pods.filter(isReady).length,
    startTime: before.startTime ?? now,
    ...(complete ? { completionTime: before.completionTime ?? now } : {}),
    conditions: jobConditions(complete, gaveUp),
  };
  if (sameJson(asMap(job.status), status)) return;
  const wasDone = asMap(job.status).conditions !== undefined && asMap(job.status).conditions !== null;
  world.patch(job, "/apis/batch/v1", "jobs/status", { status }, "jobs");
  if ((complete || gaveUp) && !wasDone)
    world.events.record(job, { component: "job-controller" }, jobEnd(complete));
}

// The Job controller's event when a Job ends: Completed, or BackoffLimitExceeded.
function jobEnd(complete: boolean): { type: "Normal" | "Warning"; reason: string; message: string } {
  return complete
    ? { type: "Normal", reason: "Completed", message: "Job completed" }
    : { type: "Warning", reason: "BackoffLimitExceeded", message: BACKOFF_MESSAGE };
}

const BACKOFF_MESSAGE = "Job has reached the specified backoff limit";
const BACKOFF_EXCEEDED = [
  { type: "FailureTarget", status: "True", reason: "BackoffLimitExceeded", message: BACKOFF_MESSAGE },
  { type: "Failed", status: "True", reason: "BackoffLimitExceeded", message: BACKOFF_MESSAGE },
];

function jobConditions(complete: boolean, gaveUp: boolean): JsonMap[] | null {
  if (complete) return [{ type: "Complete", status: "True" }];
  return gaveUp ? BACKOFF_EXCEEDED : null;
}

// How many failed pods a Job takes before it gives up (spec.backoffLimit, default 6).
function backoffLimitOf(job: JsonMap): number {
  const limit = asMap(job.spec).backoffLimit;
  return typeof limit === "number" ? limit : 6;
}

// One rollout step: the ReplicaSet of the current template grows and the others shrink (rollout.ts).
export function syncDeployment(world: WorldContext, deployment: JsonMap): void {
  const metadata = asMap(deployment.metadata);
  const spec = asMap(deployment.spec);
  const template = asMap(spec.template);
  const hash = templateHash(template);
  const name = `${String(metadata.name)}-${hash}`;
  const owned = world.ownedBy(`/apis/apps/v1/namespaces/${String(metadata.namespace)}/replicasets`, metadata);
  const asSet = (rs: JsonMap): RolloutSet => ({
    name: String(asMap(rs.metadata).name),
    replicas: Number(asMap(rs.spec).replicas ?? 0),
    available: Number(asMap(rs.status).availableReplicas ?? 0),
  });
  const current = owned.find((rs) => asMap(rs.metadata).name === name);
  const old = owned.filter((rs) => rs !== current);
  const step = rolloutStep(
    rolloutPolicy(spec),
    current ? asSet(current) : { name, replicas: 0, available: 0 },
    old.map(asSet),
  );
  const revision = nextRevision(current, old);
  if (!current) {
    createReplicaSet(world, deployment, name, hash, step.next, revision);
    scaled(world, deployment, name, 0, step.next);
  } else {
    if (revisionOf(current) !== revision)
      world.patch(current, "/apis/apps/v1", "replicasets", {
        metadata: { annotations: { [REVISION]: String(revision) } },
      });
    if (asMap(current.spec).replicas !== step.next) {
      world.patch(current, "/apis/apps/v1", "replicasets", { spec: { replicas: step.next } });
      scaled(world, deployment, name, Number(asMap(current.spec).replicas ?? 0), step.next);
    }
  }
  for (const rs of old) {
    const rsName = String(asMap(rs.metadata).name);
    const replicas = step.old.get(rsName) ?? 0;
    if (asMap(rs.spec).replicas !== replicas) {
      world.patch(rs, "/apis/apps/v1", "replicasets", { spec: { replicas } });
      scaled(world, deployment, rsName, Number(asMap(rs.spec).replicas ?? 0), replicas);
    }
  }
  pruneHistory(world, old, Number(spec.revisionHistoryLimit ?? 10));
  if (asMap(metadata.annotations)[REVISION] !== String(revision))
    world.request(
      "PATCH",
      `/apis/apps/v1/namespaces/${String(metadata.namespace)}/deployments/${String(metadata.name)}`,
      { metadata: { annotations: { [REVISION]: String(revision) } } },
    );
}

// Old ReplicaSets stay, scaled to nothing, as the Deployment's history; the oldest beyond
// revisionHistoryLimit go once they have no pods left.
function pruneHistory(world: WorldContext, old: readonly JsonMap[], limit: number): void {
  const idle = old
    .filter((rs) => asMap(rs.spec).replicas === 0 && Number(asMap(rs.status).replicas ?? 0) === 0)
    .sort((a, b) => revisionOf(a) - revisionOf(b));
  for (const rs of idle.slice(0, Math.max(0, idle.length - limit)))
    world.remove(rs, "/apis/apps/v1", "replicasets");
}

// The revision the Deployment controller records on each ReplicaSet and on the Deployment: the
// current template's ReplicaSet has the highest, one more than any other once it became current
// (again) — what `kubectl rollout history` lists and `rollout undo` goes back along.
const REVISION = "deployment.kubernetes.io/revision";

function revisionOf(replicaSet: JsonMap | undefined): number {
  return Number(asMap(asMap(replicaSet?.metadata).annotations)[REVISION] ?? 0) || 0;
}

function nextRevision(current: JsonMap | undefined, old: readonly JsonMap[]): number {
  const highest = Math.max(0, ...old.map(revisionOf));
  const own = revisionOf(current);
  return own > highest ? own : highest + 1;
}

// The Deployment controller's event for a ReplicaSet it scaled.
function scaled(
  world: WorldContext,
  deployment: JsonMap,
  replicaSet: string,
  from: number,
  to: number,
): void {
  if (from === to) return;
  world.events.record(
    deployment,
    { component: "deployment-controller" },
    {
      type: "Normal",
      reason: "ScalingReplicaSet",
      message: `Scaled ${to > from ? "up" : "down"} replica set ${replicaSet} from ${from} to ${to}`,
    },
  );
}

/** A Deployment's ReplicaSet for one pod template (named by the template's hash). */
export function createReplicaSet(
  world: WorldContext,
  deployment: JsonMap,
  name: string,
  hash: string,
  replicas: number,
  revision = 1,
): void {
  const metadata = asMap(deployment.metadata);
  const spec = asMap(deployment.spec);
  const template = asMap(spec.template);
  const labels = { ...asMap(asMap(template.metadata).labels), "pod-template-hash": hash };
  world.request("POST", `/apis/apps/v1/namespaces/${String(metadata.namespace)}/replicasets`, {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name,
      namespace: metadata.namespace ?? "",
      labels,
      annotations: { [REVISION]: String(revision) },
      ownerReferences: [ownerReference(deployment, "apps/v1", "Deployment")],
    },
    spec: {
      replicas,
      selector: { matchLabels: { ...asMap(asMap(spec.selector).matchLabels), "pod-template-hash": hash } },
      template: { ...template, metadata: { ...asMap(template.metadata), labels } },
    },
  });
}

/** The ReplicaSet controller: as many pods as it asks for. */
export function syncReplicaSet(world: WorldContext, replicaSet: JsonMap): void {
  const metadata = asMap(replicaSet.metadata);
  const want = Number(asMap(replicaSet.spec).replicas ?? 1);
  ensurePods(world, replicaSet, "ReplicaSet", want, (i) => {
    const seed = `${String(metadata.uid)}/${world.api.store.currentVersion()}/${i}`;
    return `${String(metadata.name)}-${createHash("sha256").update(seed).digest("hex").slice(0, 5)}`;
  });
}

// A StatefulSet's pods are <name>-<start> … <name>-<start+n-1> (spec.ordinals.start, default 0);
// scaling down removes the highest ordinals, and pods outside the range go, as the real controller does.
export function syncStatefulSet(world: WorldContext, statefulSet: JsonMap): void {
  const metadata = asMap(statefulSet.metadata);
  const name = String(metadata.name);
  const spec = asMap(statefulSet.spec);
  const want = Number(spec.replicas ?? 1);
  const asked = Number(asMap(spec.ordinals).start ?? 0);
  const start = Number.isSafeInteger(asked) && asked > 0 ? asked : 0;
  const outside = world
    .ownedBy(`/api/v1/namespaces/${String(metadata.namespace)}/pods`, metadata)
    .filter((pod) => {
      const ordinal = Number(String(asMap(pod.metadata).name).slice(name.length + 1));
      return !Number.isInteger(ordinal) || ordinal < start || ordinal >= start + want;
    });
  for (const pod of outside) {
    world.remove(pod, "/api/v1", "pods");
    podEvent(world, statefulSet, "StatefulSet", "delete", String(asMap(pod.metadata).name));
  }
  const gone = new Set(outside.map((pod) => String(asMap(pod.metadata).name)));
  ensurePods(world, statefulSet, "StatefulSet", want, (i) => `${name}-${start + i}`, true, undefined, gone);
}

// A Job keeps `parallelism` pods running until `completions` have succeeded.
export function syncJob(world: WorldContext, job: JsonMap): void {
  const spec = asMap(job.spec);
  const completions = Number(spec.completions ?? 1);
  const parallelism = Number(spec.parallelism ?? 1);
  const pods = world.ownedBy(
    `/api/v1/namespaces/${String(asMap(job.metadata).namespace)}/pods`,
    asMap(job.metadata),
  );
  const succeeded = pods.filter((p) => asMap(p.status).phase === "Succeeded").length;
  const failed = pods.filter((p) => asMap(p.status).phase === "Failed").length;
  // A failed pod is replaced until the backoff limit is passed; then the Job has failed.
  if (failed > backoffLimitOf(job)) return;
  const active = pods.length - succeeded - failed;
  const want =
    succeeded + failed + Math.min(parallelism, Math.max(0, completions - succeeded - active) + active);
  const name = String(asMap(job.metadata).name);
  ensurePods(world, job, "Job", want, (i) => `${name}-${i}`, false);
}

// Creates pods from the owner's template up to `want`; removes extras unless `shrink` is false.
export function ensurePods(
  world: WorldContext,
  owner: JsonMap,
  kind: string,
  want: number,
  nameOf: (i: number) => string,
  shrink = true,
  apiVersion?: string,
  gone: ReadonlySet<string> = new Set(),
): void {
  const metadata = asMap(owner.metadata);
  const namespace = String(metadata.namespace);
  // Pods deleted by name this tick (podsToDelete) no longer count.
  const pods = world
    .ownedBy(`/api/v1/namespaces/${namespace}/pods`, metadata)
    .filter((p) => !gone.has(String(asMap(p.metadata).name)));
  const template = asMap(asMap(owner.spec).template);
  const taken = new Set(pods.map((p) => asMap(p.metadata).name));
  let index = 0;
  for (let created = pods.length; created < want; created++) {
    while (taken.has(nameOf(index))) index++;
    taken.add(nameOf(index));
    const name = nameOf(index);
    world.request("POST", `/api/v1/namespaces/${namespace}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        ...asMap(template.metadata),
        name,
        namespace,
        ownerReferences: [
          ownerReference(owner, apiVersion ?? (kind === "Job" ? "batch/v1" : "apps/v1"), kind),
        ],
      },
      spec: asMap(template.spec),
      status: { phase: "Pending" },
    });
    podEvent(world, owner, kind, "create", name);
  }
  if (!shrink || pods.length <= want) return;
  // The last pods (by name; for a StatefulSet the highest ordinals) go first when scaling down.
  const byName = [...pods].sort((a, b) =>
    compareNames(String(asMap(a.metadata).name), String(asMap(b.metadata).name)),
  );
  for (const pod of byName.slice(want)) {
    world.remove(pod, "/api/v1", "pods");
    podEvent(world, owner, kind, "delete", String(asMap(pod.metadata).name));
  }
}

// A workload controller's event for a pod it created or deleted, worded as each controller words it.
function podEvent(
  world: WorldContext,
  owner: JsonMap,
  kind: string,
  verb: "create" | "delete",
  pod: string,
): void {
  const controller = `${kind.toLowerCase()}-controller`;
  const message =
    kind === "StatefulSet"
      ? `${verb === "create" ? "Create" : "Delete"} Pod ${pod} in StatefulSet ${String(asMap(owner.metadata).name)} successful`
      : `${verb === "create" ? "Created" : "Deleted"} pod: ${pod}`;
  world.events.record(
    owner,
    { component: controller },
    {
      type: "Normal",
      reason: verb === "create" ? "SuccessfulCreate" : "SuccessfulDelete",
      message,
    },
  );
}
