import type { FleetObject } from "../types.js";
import type { RuleContext } from "./rule.js";

/** Two objects of one kind may not share a name; there is at most one Fleet. */
export function checkUniqueNames({ model, reporter }: RuleContext): void {
  const groups: readonly (readonly FleetObject<string, unknown>[])[] = [
    model.clusters,
    model.placements,
    model.overrides,
    model.interpreters,
    model.federatedHPAs,
    model.cronScales,
    model.migrations,
  ];
  for (const objects of groups) {
    const first = new Map<string, FleetObject<string, unknown>>();
    for (const object of objects) {
      const key = `${object.metadata.namespace ?? ""}/${object.metadata.name}`;
      const earlier = first.get(key);
      if (!earlier) {
        first.set(key, object);
        continue;
      }
      reporter.report({
        origin: object.origin,
        path: ["metadata", "name"],
        code: "DUPLICATE_NAME",
        message: `${object.kind} "${object.metadata.name}" is already defined at ${reporter.where(earlier.origin, ["metadata", "name"])}; names must be unique`,
      });
    }
  }
}
