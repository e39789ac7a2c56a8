import { renderedPath } from "../rendered-path.js";
import type { Resource } from "../types.js";
import { findDuplicates } from "./find-duplicates.js";
import type { RuleContext } from "./rule.js";

/**
 * No two templates may describe the same object (group, kind, namespace, name), within or across
 * apps — nor two objects that would be written to the same file on the status branch, which would
 * let one app's object stand for another's (validated names and kinds make that impossible; this is
 * the check that says so).
 */
export function checkDuplicateResources({ model, reporter }: RuleContext): void {
  const resources = model.apps.flatMap((app) => app.resources);
  const keyOf = (r: Resource) => `${r.group}/${r.kind}/${r.namespace ?? ""}/${r.name}`;
  const fileOf = (r: Resource) =>
    renderedPath({ cluster: "", group: r.group, kind: r.kind, namespace: r.namespace, name: r.name });
  const seen = new Set<Resource>();
  for (const { item, earlier } of [
    ...findDuplicates(resources, keyOf),
    ...findDuplicates(resources, fileOf),
  ]) {
    if (seen.has(item)) continue;
    seen.add(item);
    reporter.report({
      origin: item.origin,
      path: ["metadata", "name"],
      code: "DUPLICATE_RESOURCE",
      message: `${describeResource(item)} is already defined at ${reporter.where(earlier.origin, ["metadata", "name"])}${earlier.app === item.app ? "" : ` (app ${earlier.app})`}; each object may be defined once`,
    });
  }
}

/** "Deployment shop/web" or "ClusterRole viewer": how resources are named in messages. */
export function describeResource(resource: Resource): string {
  return `${resource.kind} ${resource.namespace === undefined ? "" : `${resource.namespace}/`}${resource.name}`;
}
