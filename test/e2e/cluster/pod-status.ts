import { asList, asMap, type JsonMap } from "../../../src/apimachinery/json.js";

/** What the runtime knows of a pod's one container, as its status reports it. */
export interface ContainerState {
  /** Its process runs. */
  readonly running: boolean;
  readonly ready: boolean;
  readonly restarts: number;
  readonly startedAt: string;
  readonly lastExit?: { readonly code: number | null; readonly at: string } | undefined;
  /** The phase a pod whose container ended for good is in. */
  readonly ended?: "Succeeded" | "Failed" | undefined;
  /** The pod's address: its own, or on the host network the node's (127.0.0.1 when undefined). */
  readonly ip?: string | undefined;
}

/**
 * The status the kubelet would report for a pod in this state: Running (ready or not, crash-looping
 * between restarts with the last exit kept) or, for a Job's pod whose container ended for good,
 * Succeeded or Failed. Conditions keep their lastTransitionTime while their status stays. Pure but
 * for `at`, the time of the report.
 */
export function podStatus(pod: JsonMap, state: ContainerState, at: string): JsonMap {
  const container = asMap(asList(asMap(pod.spec).containers)[0]);
  const name = String(container.name);
  const image = String(container.image);
  if (state.ended) {
    const exitCode = state.lastExit?.code ?? 0;
    return {
      phase: state.ended,
      conditions: [{ type: "Ready", status: "False", lastTransitionTime: at }],
      containerStatuses: [
        {
          ...{ name, image, imageID: "", ready: false, restartCount: state.restarts },
          state: {
            terminated: {
              exitCode,
              reason: exitCode === 0 ? "Completed" : "Error",
              startedAt: state.startedAt,
              finishedAt: state.lastExit?.at ?? at,
            },
          },
        },
      ],
    };
  }
  const current = state.running
    ? { running: { startedAt: state.startedAt } }
    : { waiting: { reason: "CrashLoopBackOff", message: `back-off restarting failed container ${name}` } };
  const lastState = state.lastExit
    ? { terminated: { exitCode: state.lastExit.code ?? 137, reason: "Error", finishedAt: state.lastExit.at } }
    : {};
  const ready = state.ready && state.running;
  const ip = state.ip ?? "127.0.0.1";
  return {
    phase: "Running",
    hostIP: "127.0.0.1",
    podIP: ip,
    podIPs: [{ ip }],
    startTime: state.startedAt,
    conditions: [
      condition(pod, "PodScheduled", "True", at),
      condition(pod, "Initialized", "True", at),
      condition(pod, "ContainersReady", ready ? "True" : "False", at),
      condition(pod, "Ready", ready ? "True" : "False", at),
    ],
    containerStatuses: [
      {
        ...{ name, image, imageID: "", ready, started: state.running, restartCount: state.restarts },
        state: current,
        lastState,
      },
    ],
  };
}

/** A pod whose image has no binary built: Pending in ErrImagePull, as a missing image is. */
export function imagePullStatus(pod: JsonMap): JsonMap {
  const container = asMap(asList(asMap(pod.spec).containers)[0]);
  return {
    phase: "Pending",
    containerStatuses: [
      {
        name: String(container.name),
        image: String(container.image),
        imageID: "",
        ready: false,
        restartCount: 0,
        state: {
          waiting: { reason: "ErrImagePull", message: `no binary built for ${String(container.image)}` },
        },
      },
    ],
  };
}

// A pod condition as the kubelet reports it: its lastTransitionTime moves only when its status does.
function condition(pod: JsonMap, type: string, status: string, at: string): JsonMap {
  const was = asList(asMap(pod.status).conditions)
    .map((c) => asMap(c))
    .find((c) => c.type === type);
  return { type, status, lastTransitionTime: was?.status === status ? (was.lastTransitionTime ?? at) : at };
}

/** Now, to the second, as the API server keeps times. */
export function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}
