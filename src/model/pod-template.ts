import { type Json, valueAt } from "../apimachinery/json.js";
import { groupKind, podSpecPath } from "../apimachinery/kinds.js";
import type { InterpreterLookup } from "./interpreter-index.js";
import type { Resource } from "./types.js";

/** A workload's pod template (its metadata and spec), where its kind or its ResourceInterpreter says it is. */
export function podTemplateOf(resource: Resource, interpreterFor: InterpreterLookup): Json | undefined {
  const path = podSpecPath(groupKind(resource.group, resource.kind), interpreterFor(resource));
  return path === undefined ? undefined : valueAt(resource.object as Json, path.slice(0, -1));
}
