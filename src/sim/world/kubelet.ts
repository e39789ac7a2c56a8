import { asList, asMap, type JsonMap } from "../../model/json.js";
import { sameJson } from "./objects.js";
import type { WorldContext } from "./world-context.js";
/** The kubelet: a bound pod becomes Running and Ready after the world's delay (a Job's pod Succeeded). */
export function runKubelet(world: WorldContext): void {
  for (const pod of world.list("/api/v1/pods")) {
    const metadata = asMap(pod.metadata);
    const uid = String(metadata.uid);
    if (
      typeof asMap(pod.spec).nodeName !== "string" ||
      asMap(pod.status).phase === "Running" ||
      asMap(pod.status).phase === "Succeeded" ||
      world.ready.has(uid)
    )
      continue;
    if (backOff(world, pod)) continue;
    world.ready.add(uid);
    const timer = setTimeout(() => {
      world.timers.delete(timer);
      const live = world.api.store
        .list(world.resource("pods"), String(metadata.namespace))
        .find((p) => asMap(p.metadata).uid === uid);
      if (!live || world.stopped) return;
      const conditions = ["PodScheduled", "Initialized", "ContainersReady", "Ready"].map((type) => ({
        type,
        status: "True",
      }));
      const ofJob = asList(asMap(live.metadata).ownerReferences).some((r) => asMap(r).kind === "Job");
      // A Job's pod runs to completion; every other pod keeps running.
      const status = ofJob
        ? { phase: "Succeeded", conditions: [{ type: "Ready", status: "False", reason: "PodCompleted" }] }
        : { phase: "Running", conditions };
      world.patchPod(live, { status });
    }, world.options.readyDelayMs ?? 200);
    world.timers.add(timer);
  }
}

// A bound pod with an image no node can pull waits in ImagePullBackOff (written once).
export function backOff(world: WorldContext, pod: JsonMap): boolean {
  const containers = asList(asMap(pod.spec).containers).map((c) => asMap(c));
  const missing = containers.find((c) => world.unpullable.has(String(c.image)));
  if (!missing) return false;
  const waiting = {
    reason: "ImagePullBackOff",
    message: `Back-off pulling image "${String(missing.image)}"`,
  };
  const status = {
    phase: "Pending",
    conditions: [
      { type: "PodScheduled", status: "True" },
      { type: "Ready", status: "False", reason: "ContainersNotReady" },
    ],
    containerStatuses: containers.map((c) => ({
      name: String(c.name),
      image: String(c.image),
      ready: false,
      state: world.unpullable.has(String(c.image)) ? { waiting } : { waiting: { reason: "PodInitializing" } },
    })),
  };
  if (!sameJson(asMap(pod.status), status)) world.patchPod(pod, { status });
  return true;
}
