import { asList, asMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { ageOf } from "./human-duration.js";

/**
 * A Pod's row as `kubectl get pods` shows it from kube-apiserver: READY (ready containers of all,
 * sidecars counted), STATUS (the reason a container waits or ended with — CrashLoopBackOff,
 * ImagePullBackOff, Completed, Error — an init container's progress `Init:0/2`, Terminating, else the
 * phase), RESTARTS with the last restart's age, AGE; and the wide columns IP, NODE, NOMINATED NODE,
 * READINESS GATES.
 */
export function podCells(pod: JsonMap, now: Date): Json[] {
  const spec = asMap(pod.spec);
  const status = asMap(pod.status);
  const metadata = asMap(pod.metadata);
  const counts = { restarts: 0, ready: 0, lastRestart: 0 };
  const initContainers = asList(spec.initContainers).map(asMap);
  const sidecars = new Set(initContainers.filter(isSidecar).map((c) => String(c.name)));
  const total = asList(spec.containers).length + sidecars.size;
  let reason = String(status.reason || status.phase || "");
  if (
    asList(status.conditions).some(
      (c) => asMap(c).type === "PodScheduled" && asMap(c).reason === "SchedulingGated",
    )
  )
    reason = "SchedulingGated";
  const init = initReason(pod, sidecars, counts);
  if (init.reason !== undefined) reason = init.reason;
  if (!init.initializing || hasCondition(status, "Initialized")) {
    counts.restarts = init.sidecarRestarts;
    counts.lastRestart = init.sidecarLastRestart;
    reason = containersReason(status, reason, counts);
  }
  if (metadata.deletionTimestamp && status.reason === "NodeLost") reason = "Unknown";
  else if (metadata.deletionTimestamp && status.phase !== "Succeeded" && status.phase !== "Failed")
    reason = "Terminating";
  const restarts =
    counts.restarts !== 0 && counts.lastRestart > 0
      ? `${counts.restarts} (${ageOf(new Date(counts.lastRestart).toISOString(), now)} ago)`
      : String(counts.restarts);
  return [
    String(metadata.name ?? ""),
    `${counts.ready}/${total}`,
    reason,
    restarts,
    ageOf(metadata.creationTimestamp, now),
    String(asMap(asList(status.podIPs)[0]).ip || status.podIP || "<none>"),
    String(spec.nodeName || "<none>"),
    String(status.nominatedNodeName || "<none>"),
    readinessGates(spec, status),
  ];
}

/** The row conditions of a pod that ended: kubectl marks such rows Completed. */
export function podConditions(pod: JsonMap): Json[] | undefined {
  const phase = asMap(pod.status).phase;
  if (phase === "Succeeded")
    return [
      {
        type: "Completed",
        status: "True",
        reason: "Succeeded",
        message: "The pod has completed successfully.",
      },
    ];
  if (phase === "Failed")
    return [{ type: "Completed", status: "True", reason: "Failed", message: "The pod failed." }];
  return undefined;
}

interface Counts {
  restarts: number;
  ready: number;
  lastRestart: number;
}

// An init container that keeps running beside the others (restartPolicy: Always).
function isSidecar(container: JsonMap): boolean {
  return container.restartPolicy === "Always";
}

// The init containers' say: the first one not done gives the reason, while sidecars that started count as ready.
function initReason(pod: JsonMap, sidecars: ReadonlySet<string>, counts: Counts) {
  const statuses = asList(asMap(pod.status).initContainerStatuses).map(asMap);
  const all = asList(asMap(pod.spec).initContainers).length;
  const out = {
    reason: undefined as string | undefined,
    initializing: false,
    sidecarRestarts: 0,
    sidecarLastRestart: 0,
  };
  for (const [index, container] of statuses.entries()) {
    const restarts = Number(container.restartCount ?? 0);
    const finished = terminatedAt(container);
    counts.restarts += restarts;
    counts.lastRestart = Math.max(counts.lastRestart, finished);
    const sidecar = sidecars.has(String(container.name));
    if (sidecar) {
      out.sidecarRestarts += restarts;
      out.sidecarLastRestart = Math.max(out.sidecarLastRestart, finished);
    }
    const verdict = initVerdict(container, sidecar, `Init:${index}/${all}`);
    if (verdict === "done") continue;
    if (verdict === "ready sidecar") {
      counts.ready++;
      continue;
    }
    if (verdict === "started sidecar") continue;
    out.initializing = true;
    out.reason = verdict;
    break;
  }
  return out;
}

// One init container: done (exited 0), a started sidecar (ready or not), or the pod's reason while it initializes.
function initVerdict(container: JsonMap, sidecar: boolean, progress: string): string {
  const state = asMap(container.state);
  const terminated = asMap(state.terminated);
  const waiting = asMap(state.waiting);
  if (state.terminated && Number(terminated.exitCode ?? 0) === 0) return "done";
  if (sidecar && container.started === true)
    return container.ready === true ? "ready sidecar" : "started sidecar";
  if (state.terminated) return `Init:${terminatedReason(terminated)}`;
  if (waiting.reason && waiting.reason !== "PodInitializing") return `Init:${String(waiting.reason)}`;
  return progress;
}

// The app containers' say, from the last to the first, as the API server's printer reads them.
function containersReason(status: JsonMap, phaseReason: string, counts: Counts): string {
  const seen = { reason: phaseReason, running: false, error: "" };
  for (const container of asList(status.containerStatuses).map(asMap).reverse())
    observeContainer(container, seen, counts);
  if (seen.reason !== "Completed") return seen.reason;
  // A pod whose containers completed while one still runs is Running (ready) or NotReady.
  if (seen.running && hasCondition(status, "Ready")) return "Running";
  if (seen.error) return seen.error;
  return seen.running ? "NotReady" : seen.reason;
}

function observeContainer(
  container: JsonMap,
  seen: { reason: string; running: boolean; error: string },
  counts: Counts,
): void {
  counts.restarts += Number(container.restartCount ?? 0);
  counts.lastRestart = Math.max(counts.lastRestart, terminatedAt(container));
  const state = asMap(container.state);
  const said = containerReason(state);
  if (said === undefined) {
    if (container.ready === true && state.running) {
      seen.running = true;
      counts.ready++;
    }
    return;
  }
  seen.reason = said;
  if (Number(asMap(state.terminated).exitCode ?? 0) !== 0) seen.error = said;
}

// What a waiting or terminated container says; undefined for a running one.
function containerReason(state: JsonMap): string | undefined {
  const waiting = asMap(state.waiting);
  if (waiting.reason) return String(waiting.reason);
  return state.terminated ? terminatedReason(asMap(state.terminated)) : undefined;
}

function terminatedReason(terminated: JsonMap): string {
  if (terminated.reason) return String(terminated.reason);
  if (Number(terminated.signal ?? 0) !== 0) return `Signal:${String(terminated.signal)}`;
  return `ExitCode:${String(terminated.exitCode ?? 0)}`;
}

// When the container's last run ended (ms since the epoch; 0 when it never restarted).
function terminatedAt(container: JsonMap): number {
  const finished = asMap(asMap(container.lastState).terminated).finishedAt;
  const at = typeof finished === "string" ? Date.parse(finished) : Number.NaN;
  return Number.isNaN(at) ? 0 : at;
}

function hasCondition(status: JsonMap, type: string): boolean {
  return asList(status.conditions).some((c) => asMap(c).type === type && asMap(c).status === "True");
}

function readinessGates(spec: JsonMap, status: JsonMap): string {
  const gates = asList(spec.readinessGates).map((g) => String(asMap(g).conditionType));
  if (gates.length === 0) return "<none>";
  const met = gates.filter((gate) => hasCondition(status, gate)).length;
  return `${met}/${gates.length}`;
}
