import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import type { LogQuery } from "../container-logs.js";
import { badRequest, StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, ApiResponse, Target } from "./api-context.js";
import { existing, keyOf } from "./objects.js";

/**
 * `pods/log`: the text a container wrote (ContainerLogs), as the kubelet serves it through the API
 * server — `container` (required when the pod has several), `previous` (the run before the last
 * restart), `tailLines`, `sinceSeconds` or `sinceTime`, `timestamps`, `limitBytes`, and `follow`,
 * which streams each new line until the container's run ends or its pod is gone. A container that
 * has not started yet is a 400 saying what it waits for, as from a real server.
 */
export function podLogAnswer(api: ApiContext, request: ApiRequest, target: Target): ApiResponse {
  if (request.method !== "GET")
    throw new StatusError(405, "MethodNotAllowed", `${request.method} is not supported on pods/log`);
  const pod = existing(api, keyOf(target));
  const name = String(asMap(pod.metadata).name);
  const uid = String(asMap(pod.metadata).uid);
  const container = containerOf(pod, request.query.get("container"));
  const query = logQuery(request.query);
  if (query.previous) {
    if (!api.logs.hasPrevious(uid, container))
      throw badRequest(`previous terminated container "${container}" in pod "${name}" not found`);
  } else {
    const waiting = waitingReason(pod, container);
    if (waiting !== undefined)
      throw badRequest(`container "${container}" in pod "${name}" is waiting to start: ${waiting}`);
  }
  const text = api.logs.read(uid, container, query, api.now());
  const follow = request.query.get("follow") === "true" && !query.previous;
  if (!follow) return { status: 200, body: undefined, text };
  return {
    status: 200,
    body: undefined,
    textStream: (write, end) => {
      if (text) write(text);
      return api.logs.follow(uid, container, { line: write, end, timestamps: query.timestamps === true });
    },
  };
}

// The container asked for, or the only one; 400 when it is ambiguous or not the pod's.
function containerOf(pod: JsonMap, asked: string | null): string {
  const spec = asMap(pod.spec);
  const names = asList(spec.containers).map((c) => String(asMap(c).name));
  const inits = asList(spec.initContainers).map((c) => String(asMap(c).name));
  const name = String(asMap(pod.metadata).name);
  if (asked) {
    if (![...names, ...inits].includes(asked))
      throw badRequest(`container ${asked} is not valid for pod ${name}`);
    return asked;
  }
  if (names.length === 1 && names[0] !== undefined) return names[0];
  const initText = inits.length > 0 ? ` or one of the init containers: [${inits.join(" ")}]` : "";
  throw badRequest(
    `a container name must be specified for pod ${name}, choose one of: [${names.join(" ")}]${initText}`,
  );
}

// Why a container has nothing to show yet, or undefined once it started.
function waitingReason(pod: JsonMap, container: string): string | undefined {
  const status = asMap(pod.status);
  const statuses = [...asList(status.containerStatuses), ...asList(status.initContainerStatuses)].map(asMap);
  const found = statuses.find((s) => s.name === container);
  const state = asMap(found?.state);
  // A container that ran before (a crash loop's back-off) shows its last run.
  if (found && (state.running || state.terminated || Number(found.restartCount ?? 0) > 0)) return undefined;
  const reason = String(asMap(state.waiting).reason ?? "ContainerCreating");
  return reason === "ImagePullBackOff" || reason === "ErrImagePull"
    ? "trying and failing to pull image"
    : reason;
}

function logQuery(query: URLSearchParams): LogQuery {
  const integer = (name: string, minimum: number): number | undefined => {
    const text = query.get(name);
    if (text === null) return undefined;
    const value = Number(text);
    if (!Number.isInteger(value) || value < minimum)
      throw badRequest(`${name}: Invalid value: "${text}": must be greater than or equal to ${minimum}`);
    return value;
  };
  const sinceTime = query.get("sinceTime");
  const since = sinceTime === null ? undefined : new Date(sinceTime);
  if (since && Number.isNaN(since.getTime())) throw badRequest(`sinceTime: Invalid value: "${sinceTime}"`);
  const tailLines = integer("tailLines", 0);
  const sinceSeconds = integer("sinceSeconds", 1);
  const limitBytes = integer("limitBytes", 1);
  return {
    previous: query.get("previous") === "true",
    timestamps: query.get("timestamps") === "true",
    ...(tailLines !== undefined ? { tailLines } : {}),
    ...(sinceSeconds !== undefined ? { sinceSeconds } : {}),
    ...(since ? { sinceTime: since } : {}),
    ...(limitBytes !== undefined ? { limitBytes } : {}),
  };
}
