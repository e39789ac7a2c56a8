import type { FleetObject } from "../types.js";
import { findDuplicates } from "./find-duplicates.js";
import type { RuleContext } from "./rule.js";

/** Two objects of one kind may not share a name (within a namespace, for namespaced kinds). */
export function checkUniqueNames({ model, reporter }: RuleContext): void {
  const groups: readonly (readonly FleetObject<string, unknown>[])[] = [
    model.clusters,
    // A generated Placement (a hosted cluster's) clashing with one of the repo's is reported by the
    // hosted-control-planes rule, at the repo's Placement.
    model.placements.filter((p) => !p.origin.file.startsWith("clusters/")),
    model.overrides,
    model.interpreters,
    model.federatedHPAs,
    model.cronScales,
    model.scaleDownRequests,
    model.federatedResourceQuotas,
    model.teams,
    model.migrations,
    model.controlPlaneClasses,
    model.controlPlaneUpgrades,
    model.etcdRestores,
    model.etcdMemberReplacements,
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
