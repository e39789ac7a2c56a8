import type { JsonMap } from "../apimachinery/json.js";
import {
  autoscalerKey,
  centralized,
  effectiveSpec,
  type MemberHpas,
  targetOf,
} from "../autoscale/autoscale-step.js";
import { splitBounds } from "../autoscale/distributed-split.js";
import type { ObservedState } from "../model/observed-state.js";
import type { FederatedHPA, FleetModel } from "../model/types.js";
import { generatedObject } from "./generated-object.js";
import type { RenderedObject, WorkloadDecision } from "./render-result.js";

// Distributed autoscaling: a FederatedHPA in distributed mode (or unset on a Duplicated workload)
// becomes one HorizontalPodAutoscaler per cluster the workload runs in, its minReplicas/maxReplicas
// the cluster's share of the FederatedHPA's bounds, split in proportion to what the members run (as
// last recorded on the status branch; the scheduler's counts before anything was recorded). The
// members' HPAs own the replica count from then on; the sync leaves it to them. Pure.

/**
 * The distributed FederatedHPA of a placed workload and its split over `clusters` (where the
 * workload runs, with the scheduler's counts), or undefined when no distributed one scales it.
 */
export function memberHpasFor(
  model: FleetModel,
  decision: WorkloadDecision,
  clusters: ReadonlyMap<string, number | undefined>,
  observations: ObservedState | undefined,
): MemberHpas | undefined {
  const hpa = model.federatedHPAs.find((h) => targetOf(model, h) === decision.identity);
  if (!hpa || centralized(hpa, decision)) return undefined;
  const placed = [...clusters].filter(([, count]) => (count ?? 0) > 0);
  if (placed.length === 0) return undefined;
  const scaling = observations?.distributed?.get(decision.identity);
  const recorded = scaling?.distribution ?? {};
  const distribution = Object.fromEntries(
    placed.map(([cluster, count]) => [cluster, recorded[cluster] ?? count ?? 1]),
  );
  const spec = effectiveSpec(hpa, scaling?.bounds);
  const split = splitBounds(spec.minReplicas ?? 1, spec.maxReplicas, distribution);
  const shares: Record<string, { minReplicas: number; maxReplicas: number; replicas: number }> = {};
  for (const [cluster, bounds] of Object.entries(split.clusters))
    shares[cluster] = { ...bounds, replicas: distribution[cluster] ?? 0 };
  return {
    autoscaler: hpa.metadata.name,
    clusters: shares,
    ...(scaling?.bounds ? { boundsBy: scaling.bounds.by } : {}),
  };
}

/** The HorizontalPodAutoscaler objects of every workload a distributed FederatedHPA scales, one per cluster. */
export function memberHpaObjects(
  model: FleetModel,
  decisions: readonly WorkloadDecision[],
): RenderedObject[] {
  const objects: RenderedObject[] = [];
  const byKey = new Map(model.federatedHPAs.map((h) => [h.metadata.name, h]));
  for (const decision of decisions) {
    const hpa = decision.memberHpas && byKey.get(decision.memberHpas.autoscaler);
    if (!hpa || !decision.memberHpas) continue;
    const namespace = decision.identity.split("/")[2] ?? "";
    for (const [cluster, bounds] of Object.entries(decision.memberHpas.clusters)) {
      objects.push(
        generatedObject(decision.app, [decision.placement], cluster, memberHpa(hpa, namespace, bounds)),
      );
    }
  }
  return objects;
}

// autoscaling/v2, the FederatedHPA's metrics and behavior as they are, the cluster's bounds.
function memberHpa(
  hpa: FederatedHPA,
  namespace: string,
  bounds: { readonly minReplicas: number; readonly maxReplicas: number },
): JsonMap {
  const { scaleTargetRef, metrics, behavior } = hpa.spec;
  return JSON.parse(
    JSON.stringify({
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: {
        name: hpa.metadata.name,
        namespace,
        annotations: { "gitfleet.io/federated-hpa": autoscalerKey(hpa) },
      },
      spec: {
        scaleTargetRef: {
          apiVersion: scaleTargetRef.apiVersion,
          kind: scaleTargetRef.kind,
          name: scaleTargetRef.name,
        },
        minReplicas: bounds.minReplicas,
        maxReplicas: bounds.maxReplicas,
        metrics: metrics ?? [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
          },
        ],
        ...(behavior ? { behavior } : {}),
      },
    }),
  ) as JsonMap;
}
