import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { describeIdentity } from "../model/identity.js";
import { APP_LABEL, MANAGED_BY } from "../render/tracking.js";
import { HOOK_RUN_ANNOTATION } from "./app-pass.js";
import { FIELD_MANAGER } from "./field-manager.js";

/**
 * Whether a live object is a hook gitfleet made for `app`: it carries the hook-run mark, gitfleet's
 * managed-by label and the app's label, and gitfleet's field manager wrote it. Only such an object
 * may be deleted to make a hook afresh; any other object with the hook's identity is someone else's
 * (an operator's Namespace, a system ConfigMap) and stays as it is. Pure.
 */
export function isOwnHook(live: JsonMap, app: string): boolean {
  const metadata = asMap(live.metadata);
  const labels = asMap(metadata.labels);
  return (
    typeof asMap(metadata.annotations)[HOOK_RUN_ANNOTATION] === "string" &&
    labels[MANAGED_BY.key] === MANAGED_BY.value &&
    labels[APP_LABEL] === app &&
    asList(metadata.managedFields).some((entry) => asMap(entry).manager === FIELD_MANAGER)
  );
}

/** What a hook reports when another object holds its identity: a conflict, nothing deleted. */
export function hookConflict(identity: string, app: string): string {
  return `conflict: ${describeIdentity(identity)} exists and is not a hook gitfleet made for app ${app}; it is left as it is (rename the hook, or remove that object)`;
}
