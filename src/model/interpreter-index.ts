import { type GroupKind, groupKind, groupOf } from "../apimachinery/kinds.js";
import { compareStrings } from "./file-tree.js";
import type { FleetModel, Resource, ResourceInterpreter, ResourceInterpreterSpec } from "./types.js";

/** Finds the ResourceInterpreter declared for a resource's group and kind (the first by name if several). */
export type InterpreterLookup = (
  resource: Pick<Resource, "group" | "kind">,
) => ResourceInterpreter | undefined;

/** Indexes a model's interpreters by group and kind. */
export function indexInterpreters(model: Pick<FleetModel, "interpreters">): InterpreterLookup {
  const index = new Map<GroupKind, ResourceInterpreter>();
  const sorted = [...model.interpreters].sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
  for (const interpreter of sorted) {
    const key = groupKind(groupOf(interpreter.spec.target.apiVersion), interpreter.spec.target.kind);
    if (!index.has(key)) index.set(key, interpreter);
  }
  return (resource) => index.get(groupKind(resource.group, resource.kind));
}

/** Finds a live or rendered object's interpreter by its apiVersion's group and its kind (any version). */
export type ObjectInterpreterLookup = (
  apiVersion: string,
  kind: string,
) => ResourceInterpreterSpec | undefined;

/**
 * The same lookup as {@link indexInterpreters}, for objects read as JSON (the sync, the agent, the
 * autoscaler): an interpreter written for `apps.kruise.io/v1alpha1 CloneSet` serves a `v1beta1` one.
 */
export function indexObjectInterpreters(model: Pick<FleetModel, "interpreters">): ObjectInterpreterLookup {
  const lookup = indexInterpreters(model);
  return (apiVersion, kind) => lookup({ group: groupOf(apiVersion), kind })?.spec;
}
