import type { Resource } from "../types.js";
import { findDuplicates } from "./find-duplicates.js";
import type { RuleContext } from "./rule.js";

/** No two templates may describe the same object (group, kind, namespace, name), within or across apps. */
export function checkDuplicateResources({ model, reporter }: RuleContext): void {
  const resources = model.apps.flatMap((app) => app.resources);
  const keyOf = (r: Resource) => `${r.group}/${r.kind}/${r.namespace ?? ""}/${r.name}`;
  for (const { item, earlier } of findDuplicates(resources, keyOf)) {
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
