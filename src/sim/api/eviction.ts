import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import { type LabelSelector, matchesLabelSelector } from "../../apimachinery/label-selector.js";
import { BUILT_IN_RESOURCES } from "../api-resources.js";
import { StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, ApiResponse, Target } from "./api-context.js";
import { existing, keyOf } from "./objects.js";
import { deleteObject } from "./write.js";

const PDBS = BUILT_IN_RESOURCES.find((r) => r.kind === "PodDisruptionBudget" && r.group === "policy");

/**
 * `pods/eviction` (`kubectl drain`): an Eviction deletes the pod unless a PodDisruptionBudget that
 * selects it allows no disruption now, as kube-apiserver answers — 429 TooManyRequests naming the
 * budget, 500 when more than one budget selects the pod, 400 when the Eviction names another pod. A
 * pod that has ended is deleted whatever its budget says. Simulated members run no disruption
 * controller, so the budget's allowance is counted at the eviction from the pods it selects that
 * are Ready (minAvailable or maxUnavailable, a count or a percentage of the selected pods).
 */
export function evictionAnswer(api: ApiContext, request: ApiRequest, target: Target): ApiResponse {
  if (request.method !== "POST")
    throw new StatusError(
      405,
      "MethodNotAllowed",
      "the server does not allow this method on the requested resource",
    );
  const key = keyOf(target);
  const pod = existing(api, key);
  const named = asMap(asMap(request.body).metadata).name;
  if (named !== undefined && named !== key.name)
    throw new StatusError(400, "BadRequest", "name in URL does not match name in Eviction object");
  const phase = asMap(pod.status).phase;
  if (phase !== "Succeeded" && phase !== "Failed") {
    const budgets = budgetsOf(api, pod);
    if (budgets.length > 1)
      throw new StatusError(
        500,
        "InternalError",
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
      );
    const [budget] = budgets;
    if (budget) {
      const { healthy, desired } = allowance(api, budget);
      if (healthy - desired <= 0)
        throw new StatusError(
          429,
          "TooManyRequests",
          "Cannot evict pod as it would violate the pod's disruption budget.",
          {
            causes: [
              {
                reason: "DisruptionBudget",
                message: `The disruption budget ${String(asMap(budget.metadata).name)} needs ${desired} healthy pods and has ${healthy} currently`,
                field: "",
              },
            ],
          },
        );
    }
  }
  deleteObject(api, key, asMap(asMap(request.body).deleteOptions));
  return {
    status: 201,
    body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 },
  };
}

function budgetsOf(api: ApiContext, pod: JsonMap): JsonMap[] {
  if (!PDBS) return [];
  const metadata = asMap(pod.metadata);
  const labels = asMap(metadata.labels) as Record<string, string>;
  return api.store.list(PDBS, String(metadata.namespace ?? "")).filter((pdb) => {
    const selector = asMap(pdb.spec).selector;
    // A budget without a selector (or with an empty one under policy/v1) selects every pod.
    return matchesLabelSelector(asMap(selector) as LabelSelector, labels);
  });
}

// The Ready pods a budget selects, and how many of them it needs.
function allowance(api: ApiContext, budget: JsonMap): { healthy: number; desired: number } {
  const pods = BUILT_IN_RESOURCES.find((r) => r.kind === "Pod" && r.group === "");
  const spec = asMap(budget.spec);
  const selected = pods
    ? api.store
        .list(pods, String(asMap(budget.metadata).namespace ?? ""))
        .filter((p) =>
          matchesLabelSelector(
            asMap(spec.selector) as LabelSelector,
            asMap(asMap(p.metadata).labels) as Record<string, string>,
          ),
        )
    : [];
  const healthy = selected.filter((p) =>
    asList(asMap(p.status).conditions).some((c) => asMap(c).type === "Ready" && asMap(c).status === "True"),
  ).length;
  const of = (value: unknown, roundUp: boolean) =>
    typeof value === "string" && value.endsWith("%")
      ? (roundUp ? Math.ceil : Math.floor)((Number.parseInt(value, 10) / 100) * selected.length)
      : Number(value ?? 0);
  // The disruption controller rounds a percentage up for both (minAvailable and maxUnavailable).
  const desired =
    spec.minAvailable !== undefined
      ? of(spec.minAvailable, true)
      : spec.maxUnavailable !== undefined
        ? Math.max(0, selected.length - of(spec.maxUnavailable, true))
        : 0;
  return { healthy, desired };
}
