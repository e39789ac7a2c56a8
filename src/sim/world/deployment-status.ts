import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import {
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
  progressCondition,
  type RolloutCounts,
} from "../deployment-progress.js";
import { sameJson, templateHash } from "./objects.js";
import type { WorldContext } from "./world-context.js";
import { PASS_MS } from "./world-context.js";
/** The Deployment controller's status: replicas summed over its ReplicaSets, Available and Progressing. */
export function updateDeploymentStatus(world: WorldContext, deployment: JsonMap): void {
  const metadata = asMap(deployment.metadata);
  const sets = world.ownedBy(`/apis/apps/v1/namespaces/${String(metadata.namespace)}/replicasets`, metadata);
  const sum = (field: string) => sets.reduce((total, rs) => total + Number(asMap(rs.status)[field] ?? 0), 0);
  const desired = Number(asMap(deployment.spec).replicas ?? 1);
  const available = sum("availableReplicas");
  const hash = templateHash(asMap(asMap(deployment.spec).template));
  const updated = sets.find((rs) => asMap(rs.metadata).name === `${String(metadata.name)}-${hash}`);
  const counts = {
    replicas: sum("replicas"),
    updatedReplicas: Number(asMap(updated?.status).replicas ?? 0),
    readyReplicas: sum("readyReplicas"),
    availableReplicas: available,
  };
  const progress = progressOf(world, deployment, counts, desired, `${String(metadata.name)}-${hash}`);
  const status = {
    observedGeneration: metadata.generation ?? 1,
    ...counts,
    unavailableReplicas: desired - available > 0 ? desired - available : null,
    conditions: [
      {
        type: "Available",
        status: available >= desired ? "True" : "False",
        reason: available >= desired ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
      },
      progress,
    ],
  };
  if (!sameJson(asMap(deployment.status), status))
    world.patch(deployment, "/apis/apps/v1", "deployments/status", { status }, "deployments");
}

// The Progressing condition, and a pass when its deadline runs out while nothing progresses.
export function progressOf(
  world: WorldContext,
  deployment: JsonMap,
  after: RolloutCounts,
  desired: number,
  replicaSetName: string,
): JsonMap {
  const metadata = asMap(deployment.metadata);
  const status = asMap(deployment.status);
  const deadlineSeconds = asMap(deployment.spec).progressDeadlineSeconds;
  const outcome = progressCondition({
    current: asList(status.conditions)
      .map((c) => asMap(c))
      .find((c) => c.type === "Progressing"),
    before: {
      replicas: Number(status.replicas ?? 0),
      updatedReplicas: Number(status.updatedReplicas ?? 0),
      readyReplicas: Number(status.readyReplicas ?? 0),
      availableReplicas: Number(status.availableReplicas ?? 0),
    },
    after,
    desired,
    newGeneration: status.observedGeneration !== (metadata.generation ?? 1),
    deadlineSeconds:
      typeof deadlineSeconds === "number" ? deadlineSeconds : DEFAULT_PROGRESS_DEADLINE_SECONDS,
    replicaSetName,
    now: Date.now(),
  });
  const uid = String(metadata.uid);
  if (outcome.deadlineAt !== undefined && world.deadlines.get(uid)?.at !== outcome.deadlineAt) {
    const previous = world.deadlines.get(uid);
    if (previous) {
      clearTimeout(previous.timer);
      world.timers.delete(previous.timer);
    }
    const timer = setTimeout(
      () => {
        world.timers.delete(timer);
        world.deadlines.delete(uid);
        world.schedule();
      },
      Math.max(0, outcome.deadlineAt - Date.now()) + PASS_MS,
    );
    world.timers.add(timer);
    world.deadlines.set(uid, { at: outcome.deadlineAt, timer });
  }
  return outcome.condition;
}
