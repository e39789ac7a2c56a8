import { createHash } from "node:crypto";
import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import { timestamp } from "../api/helpers.js";
import { faultsOf } from "../pod-faults.js";
import { sameJson } from "./objects.js";
import type { WorldContext } from "./world-context.js";

/**
 * The kubelet: a bound pod's images are pulled and its containers started after the world's delay —
 * Running with its IP, its containers' statuses and their log's first lines, Ready unless a readiness
 * probe fails (world/prober.ts); a Job's pod runs to completion. Each step is recorded as the kubelet
 * records it: Pulling, Pulled, Created, Started; for an image no node can pull, Failed and BackOff.
 */
export function runKubelet(world: WorldContext): void {
  for (const pod of world.list("/api/v1/pods")) {
    const metadata = asMap(pod.metadata);
    const uid = String(metadata.uid);
    const phase = asMap(pod.status).phase;
    if (
      typeof asMap(pod.spec).nodeName !== "string" ||
      phase === "Running" ||
      phase === "Succeeded" ||
      phase === "Failed" ||
      world.ready.has(uid)
    )
      continue;
    if (backOff(world, pod)) continue;
    world.ready.add(uid);
    const timer = setTimeout(() => {
      world.timers.delete(timer);
      const live = world.api.store.get({
        resource: world.resource("pods"),
        namespace: String(metadata.namespace),
        name: String(metadata.name),
      });
      if (!live || asMap(live.metadata).uid !== uid || world.stopped) return;
      startContainers(world, live);
    }, world.options.readyDelayMs ?? 200);
    world.timers.add(timer);
  }
}

// The containers start: events and first log lines, then the pod's status.
function startContainers(world: WorldContext, pod: JsonMap): void {
  const spec = asMap(pod.spec);
  const node = String(spec.nodeName);
  const uid = String(asMap(pod.metadata).uid);
  const now = world.api.now();
  const ofJob = asList(asMap(pod.metadata).ownerReferences).some((r) => asMap(r).kind === "Job");
  // A Job's pod under a crashLoop fault exits with code 1: the pod fails and the Job counts it.
  const failing = ofJob && faultsOf(pod, world.podFaults).crashLoop;
  const containers = asList(spec.containers).map(asMap);
  for (const container of containers) {
    const name = String(container.name);
    const image = String(container.image ?? "");
    const fieldPath = `spec.containers{${name}}`;
    const kubelet = { component: "kubelet", host: node };
    world.events.record(pod, kubelet, {
      type: "Normal",
      reason: "Pulling",
      message: `Pulling image "${image}"`,
      fieldPath,
    });
    world.events.record(pod, kubelet, {
      type: "Normal",
      reason: "Pulled",
      message: `Successfully pulled image "${image}" in ${world.options.readyDelayMs ?? 200}ms (${world.options.readyDelayMs ?? 200}ms including waiting)`,
      fieldPath,
    });
    world.events.record(pod, kubelet, {
      type: "Normal",
      reason: "Created",
      message: `Created container: ${name}`,
      fieldPath,
    });
    world.events.record(pod, kubelet, {
      type: "Normal",
      reason: "Started",
      message: `Started container ${name}`,
      fieldPath,
    });
    world.api.logs.write(
      uid,
      name,
      `gitfleet simulator: container ${name} started from ${image} on ${node}`,
      now,
    );
    if (ofJob) {
      const last = failing
        ? "gitfleet simulator: fatal: the process exited with code 1 (crashLoop fault)"
        : `gitfleet simulator: container ${name} completed`;
      world.api.logs.write(uid, name, last, now);
      world.api.logs.end(uid, name);
    }
  }
  if (!ofJob)
    for (const name of world.unreadyContainers(pod))
      world.api.logs.write(uid, name, "gitfleet simulator: readiness probe failing", now);
  const status = ofJob ? finishedStatus(world, pod, now, failing) : runningStatus(world, pod, now);
  world.patchPod(pod, { status });
}

// A pod whose containers run: its IPs, start time, each container running (ready as its probe says).
export function runningStatus(world: WorldContext, pod: JsonMap, now: Date): JsonMap {
  const spec = asMap(pod.spec);
  const unready = world.unreadyContainers(pod);
  const containers = asList(spec.containers).map(asMap);
  const ready = unready.length === 0;
  const at = timestamp(now);
  const notReady = `containers with unready status: [${unready.join(" ")}]`;
  const readiness = ready
    ? { status: "True" }
    : { status: "False", reason: "ContainersNotReady", message: notReady };
  return {
    phase: "Running",
    ...addresses(world, pod),
    startTime: asMap(pod.status).startTime ?? at,
    conditions: [
      { type: "PodReadyToStartContainers", status: "True", lastTransitionTime: at },
      { type: "Initialized", status: "True", lastTransitionTime: at },
      { type: "Ready", ...readiness, lastTransitionTime: at },
      { type: "ContainersReady", ...readiness, lastTransitionTime: at },
      { type: "PodScheduled", status: "True", lastTransitionTime: at },
    ],
    containerStatuses: containers.map((c) => ({
      ...containerIdentity(pod, c),
      ready: !unready.includes(String(c.name)),
      started: true,
      restartCount: 0,
      state: { running: { startedAt: at } },
    })),
  };
}

// A Job's pod that ran to its end: Succeeded (exit code 0) or Failed (exit code 1).
function finishedStatus(world: WorldContext, pod: JsonMap, now: Date, failed: boolean): JsonMap {
  const at = timestamp(now);
  const reason = failed ? "Error" : "Completed";
  return {
    phase: failed ? "Failed" : "Succeeded",
    ...addresses(world, pod),
    startTime: at,
    conditions: [
      { type: "PodReadyToStartContainers", status: "False", lastTransitionTime: at },
      { type: "Initialized", status: "True", lastTransitionTime: at },
      {
        type: "Ready",
        status: "False",
        reason: failed ? "PodFailed" : "PodCompleted",
        lastTransitionTime: at,
      },
      {
        type: "ContainersReady",
        status: "False",
        reason: failed ? "PodFailed" : "PodCompleted",
        lastTransitionTime: at,
      },
      { type: "PodScheduled", status: "True", lastTransitionTime: at },
    ],
    containerStatuses: asList(asMap(pod.spec).containers).map((c) => ({
      ...containerIdentity(pod, asMap(c)),
      ready: false,
      started: false,
      restartCount: 0,
      state: { terminated: { exitCode: failed ? 1 : 0, reason, startedAt: at, finishedAt: at } },
    })),
  };
}

/** What a container status names: the container, its image and the runtime's ids for both. */
function containerIdentity(pod: JsonMap, container: JsonMap): JsonMap {
  const image = String(container.image ?? "");
  const digest = createHash("sha256").update(image).digest("hex");
  const id = createHash("sha256")
    .update(`${String(asMap(pod.metadata).uid)}/${String(container.name)}`)
    .digest("hex");
  return {
    name: String(container.name),
    image,
    imageID: `${image.split(/[@:]/)[0]}@sha256:${digest}`,
    containerID: `containerd://${id}`,
  };
}

// The pod's IP on its node's pod range, and the node's own address.
function addresses(world: WorldContext, pod: JsonMap): JsonMap {
  const known = asMap(pod.status);
  const podIP =
    typeof known.podIP === "string" ? known.podIP : world.nextPodIp(String(asMap(pod.spec).nodeName));
  const hostIP = world.nodeIp(String(asMap(pod.spec).nodeName));
  return { hostIP, hostIPs: [{ ip: hostIP }], podIP, podIPs: [{ ip: podIP }] };
}

// A bound pod with an image no node can pull waits in ImagePullBackOff (written once, with its events).
export function backOff(world: WorldContext, pod: JsonMap): boolean {
  const containers = asList(asMap(pod.spec).containers).map((c) => asMap(c));
  const missing = containers.find((c) => world.unpullable.has(String(c.image)));
  if (!missing) return false;
  const image = String(missing.image);
  const waiting = { reason: "ImagePullBackOff", message: `Back-off pulling image "${image}"` };
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
      restartCount: 0,
      started: false,
      state: world.unpullable.has(String(c.image)) ? { waiting } : { waiting: { reason: "PodInitializing" } },
    })),
  };
  if (sameJson(asMap(pod.status), status)) return true;
  const source = { component: "kubelet", host: String(asMap(pod.spec).nodeName) };
  const fieldPath = `spec.containers{${String(missing.name)}}`;
  const failure = `Failed to pull image "${image}": rpc error: code = NotFound desc = failed to pull and unpack image "${image}": not found`;
  world.events.record(pod, source, {
    type: "Normal",
    reason: "Pulling",
    message: `Pulling image "${image}"`,
    fieldPath,
  });
  world.events.record(pod, source, { type: "Warning", reason: "Failed", message: failure, fieldPath });
  world.events.record(pod, source, {
    type: "Warning",
    reason: "Failed",
    message: "Error: ErrImagePull",
    fieldPath,
  });
  world.events.record(pod, source, {
    type: "Normal",
    reason: "BackOff",
    message: waiting.message,
    fieldPath,
  });
  world.events.record(pod, source, {
    type: "Warning",
    reason: "Failed",
    message: "Error: ImagePullBackOff",
    fieldPath,
  });
  world.patchPod(pod, { status });
  return true;
}
