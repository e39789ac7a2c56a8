import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import { timestamp } from "../api/helpers.js";
import { faultsOf } from "../pod-faults.js";
import { runningStatus } from "./kubelet.js";
import type { WorldContext } from "./world-context.js";

/**
 * The kubelet's probes and restarts under the member's pod faults (sim/pod-faults.ts): a running
 * pod whose readiness probe fails turns not Ready (Unhealthy, counted each probe period, as the
 * kubelet records it) and Ready again once the fault is cleared; a crash-looping container exits,
 * restarts and backs off — its restart count, its previous run's log and BackOff events as on a
 * real node.
 */
export function probePods(world: WorldContext): void {
  for (const pod of world.list("/api/v1/pods")) {
    if (asMap(pod.status).phase !== "Running" || !started(pod)) continue;
    const unready = world.unreadyContainers(pod);
    const shown = asList(asMap(pod.status).containerStatuses)
      .map(asMap)
      .filter((c) => c.ready !== true)
      .map((c) => String(c.name));
    if (sameSet(unready, shown)) continue;
    const now = world.api.now();
    const uid = String(asMap(pod.metadata).uid);
    for (const name of unready.filter((n) => !shown.includes(n))) {
      unhealthy(world, pod, name);
      world.api.logs.write(uid, name, "gitfleet simulator: readiness probe failing", now);
    }
    for (const name of shown.filter((n) => !unready.includes(n)))
      world.api.logs.write(uid, name, "gitfleet simulator: readiness probe passing", now);
    world.patchPod(pod, { status: withRestarts(runningStatus(world, pod, now), pod) });
  }
}

/** One probe period: failing probes are recorded again; crash-looping containers crash and restart. */
export function probePeriod(world: WorldContext): void {
  // Without pod faults every probe passes and nothing crashes: nothing to look at.
  if (world.podFaults.length === 0) return;
  for (const pod of world.list("/api/v1/pods")) {
    if (asMap(pod.status).phase !== "Running" || !started(pod)) continue;
    const faults = faultsOf(pod, world.podFaults);
    if (faults.crashLoop) {
      crash(world, pod);
      continue;
    }
    for (const name of world.unreadyContainers(pod)) unhealthy(world, pod, name);
  }
}

// Every container exits with code 1 and starts again after a back-off.
function crash(world: WorldContext, pod: JsonMap): void {
  const now = world.api.now();
  const at = timestamp(now);
  const uid = String(asMap(pod.metadata).uid);
  const name = String(asMap(pod.metadata).name);
  const namespace = String(asMap(pod.metadata).namespace);
  const node = String(asMap(pod.spec).nodeName);
  const statuses = asList(asMap(pod.status).containerStatuses).map(asMap);
  const containerStatuses = statuses.map((status) => {
    const container = String(status.name);
    world.api.logs.write(
      uid,
      container,
      "gitfleet simulator: fatal: the process exited with code 1 (crashLoop fault)",
      now,
    );
    world.api.logs.restart(uid, container);
    world.api.logs.write(uid, container, `gitfleet simulator: container ${container} restarted`, now);
    world.events.record(
      pod,
      { component: "kubelet", host: node },
      {
        type: "Warning",
        reason: "BackOff",
        message: `Back-off restarting failed container ${container} in pod ${name}_${namespace}(${uid})`,
        fieldPath: `spec.containers{${container}}`,
      },
    );
    return {
      ...status,
      ready: false,
      started: false,
      restartCount: Number(status.restartCount ?? 0) + 1,
      state: {
        waiting: {
          reason: "CrashLoopBackOff",
          message: `back-off 10s restarting failed container=${container} pod=${name}_${namespace}(${uid})`,
        },
      },
      lastState: {
        terminated: { exitCode: 1, reason: "Error", startedAt: runningSince(status) ?? at, finishedAt: at },
      },
    };
  });
  const notReady = {
    status: "False",
    reason: "ContainersNotReady",
    message: `containers with unready status: [${statuses.map((s) => String(s.name)).join(" ")}]`,
  };
  const conditions = asList(asMap(pod.status).conditions)
    .map(asMap)
    .map((c) =>
      c.type === "Ready" || c.type === "ContainersReady" ? { ...c, ...notReady, lastTransitionTime: at } : c,
    );
  world.patchPod(pod, { status: { containerStatuses, conditions } });
}

function unhealthy(world: WorldContext, pod: JsonMap, container: string): void {
  const probe = asMap(
    asList(asMap(pod.spec).containers)
      .map(asMap)
      .find((c) => c.name === container)?.readinessProbe,
  );
  const message = probe.httpGet
    ? "Readiness probe failed: HTTP probe failed with statuscode: 503"
    : probe.tcpSocket
      ? `Readiness probe failed: dial tcp ${String(asMap(pod.status).podIP)}:${String(asMap(probe.tcpSocket).port)}: connect: connection refused`
      : "Readiness probe failed: command exited with code 1";
  world.events.record(
    pod,
    { component: "kubelet", host: String(asMap(pod.spec).nodeName) },
    {
      type: "Warning",
      reason: "Unhealthy",
      message,
      fieldPath: `spec.containers{${container}}`,
    },
  );
}

// A status that keeps what the containers went through: restart counts and last states.
function withRestarts(status: JsonMap, pod: JsonMap): JsonMap {
  const before = new Map(
    asList(asMap(pod.status).containerStatuses)
      .map(asMap)
      .map((c) => [String(c.name), c]),
  );
  return {
    ...status,
    startTime: asMap(pod.status).startTime ?? status.startTime ?? null,
    containerStatuses: asList(status.containerStatuses)
      .map(asMap)
      .map((c) => {
        const was = before.get(String(c.name));
        return was
          ? {
              ...c,
              restartCount: was.restartCount ?? 0,
              ...(was.lastState ? { lastState: was.lastState } : {}),
            }
          : c;
      }),
  };
}

function started(pod: JsonMap): boolean {
  return asList(asMap(pod.status).containerStatuses).some((c) => typeof asMap(c).containerID === "string");
}

function runningSince(status: JsonMap): string | undefined {
  const since = asMap(asMap(status.state).running).startedAt;
  return typeof since === "string" ? since : undefined;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
