import { asMap, type JsonMap } from "../apimachinery/json.js";

/** The label every object gitfleet manages carries, and what pruning relies on. */
export const MANAGED_BY = { key: "app.kubernetes.io/managed-by", value: "gitfleet" } as const;
/** The label naming the app an object belongs to. */
export const APP_LABEL = "gitfleet.io/app";
/** The annotation naming the Placements that put the object on the cluster. */
export const PLACEMENT_ANNOTATION = "gitfleet.io/placement";
/**
 * On a Namespace gitfleet created bare because objects need it (no app renders it): marks it as
 * gitfleet's, so a Namespace an app renders later takes it over. An apply of nothing but a name
 * leaves no managedFields on a real API server, so without a mark it would look like anybody's.
 */
export const IMPLICIT_NAMESPACE_ANNOTATION = "gitfleet.io/implicit-namespace";

/**
 * Adds gitfleet's tracking metadata: the managed-by and app labels and the placement annotation.
 * Nothing that changes from commit to commit (no commit hash, no time), so an unchanged object
 * renders byte-identically.
 */
export function withTracking(object: JsonMap, app: string, placements: readonly string[]): JsonMap {
  const metadata = asMap(object.metadata);
  return {
    ...object,
    metadata: {
      ...metadata,
      labels: { ...asMap(metadata.labels), [MANAGED_BY.key]: MANAGED_BY.value, [APP_LABEL]: app },
      annotations: { ...asMap(metadata.annotations), [PLACEMENT_ANNOTATION]: placements.join(",") },
    },
  };
}
