import type { FleetObject } from "../types.js";
import { findDuplicates } from "./find-duplicates.js";
import type { RuleContext } from "./rule.js";

/** Two objects of one kind may not share a name (within a namespace, for namespaced kinds). */
export function checkUniqueNames({ model, reporter }: RuleContext): void {
  const groups: readonly (readonly FleetObject<string, unknown>[])[] = [
    model.clusters,
    model.placements,
    model.overrides,
    model.interpreters,
    model.federatedHPAs,
    model.cronScales,
    model.scaleDownRequests,
    model.migrations,
  ];
  for (const objects of groups) {
    for (const { item, earlier } of findDuplicates(
      objects,
      (o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`,
    )) {
      reporter.report({
        origin: item.origin,
        path: ["metadata", "name"],
        code: "DUPLICATE_NAME",
        message: `${item.kind} "${item.metadata.name}" is already defined at ${reporter.where(earlier.origin, ["metadata", "name"])}; names must be unique`,
      });
    }
  }
}
