import { type Json, valueAt } from "../apimachinery/json.js";
import { groupKind } from "../apimachinery/kinds.js";
import type { InterpreterLookup } from "./interpreter-index.js";
import type { Resource } from "./types.js";

/** The replicas a workload template asks for (a Job: its parallelism); 1 when unset, as Kubernetes defaults it. */
export function readReplicas(resource: Resource, interpreterFor: InterpreterLookup): number {
  const key = groupKind(resource.group, resource.kind);
  const path =
    key === "batch/Job"
      ? ["spec", "parallelism"]
      : (interpreterFor(resource)?.spec.replicasPath?.split(".") ?? ["spec", "replicas"]);
  const value = valueAt(resource.object as Json, path);
  // Kubernetes defaults replicas (and a Job's parallelism) to 1.
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 1;
}
