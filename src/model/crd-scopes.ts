import { type GroupKind, groupKind } from "../apimachinery/kinds.js";
import { isRecord } from "./read-gitfleet-object.js";
import type { SourceDocument } from "./yaml-source.js";

/** Whether each kind the documents' CustomResourceDefinitions define is cluster-scoped. */
export function crdScopes(sources: readonly SourceDocument[]): Map<GroupKind, boolean> {
  const scopes = new Map<GroupKind, boolean>();
  for (const { value } of sources) {
    if (!isRecord(value) || value.kind !== "CustomResourceDefinition" || !isRecord(value.spec)) continue;
    const { group, names, scope } = value.spec;
    if (typeof group === "string" && isRecord(names) && typeof names.kind === "string")
      scopes.set(groupKind(group, names.kind), scope === "Cluster");
  }
  return scopes;
}
