import type { Resource } from "../types.js";
import type { RuleContext } from "./rule.js";

/** No two templates may describe the same object (group, kind, namespace, name), within or across apps. */
export function checkDuplicateResources({ model, reporter }: RuleContext): void {
  const seen = new Map<string, Resource>();
  for (const resource of model.apps.flatMap((app) => app.resources)) {
    const key = `${resource.group}/${resource.kind}/${resource.namespace ?? ""}/${resource.name}`;
    const earlier = seen.get(key);
    if (!earlier) {
      seen.set(key, resource);
      continue;
    }
    reporter.report({
      origin: resource.origin,
      path: ["metadata", "name"],
      code: "DUPLICATE_RESOURCE",
      message: `${describeResource(resource)} is already defined at ${reporter.where(earlier.origin, ["metadata", "name"])}${earlier.app === resource.app ? "" : ` (app ${earlier.app})`}; each object may be defined once`,
    });
  }
}

/** "Deployment shop/web" or "ClusterRole viewer": how resources are named in messages. */
export function describeResource(resource: Resource): string {
  return `${resource.kind} ${resource.namespace === undefined ? "" : `${resource.namespace}/`}${resource.name}`;
}
