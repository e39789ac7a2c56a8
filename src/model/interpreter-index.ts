import { compareStrings } from "./file-tree.js";
import { type GroupKind, groupKind, groupOf } from "./kinds.js";
import type { FleetModel, Resource, ResourceInterpreter } from "./types.js";

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
