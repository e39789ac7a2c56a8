import type { JsonMap } from "../apimachinery/json.js";
import { asMap } from "../apimachinery/json.js";
import { IMPLICIT_NAMESPACE_ANNOTATION } from "../render/tracking.js";
import type { DesiredObject } from "./desired-objects.js";
import { driftedPaths } from "./drift.js";
import { FIELD_MANAGER } from "./field-manager.js";
import type { InventoryEntry } from "./inventory.js";

export type Step =
  | { readonly kind: "refuse" }
  | { readonly kind: "keep"; readonly action: "unchanged" | "drifted"; readonly drift: readonly string[] }
  | { readonly kind: "apply"; readonly drift: readonly string[] };

/** What to do with one object, given its inventory entry and what the cluster holds. Pure. */
export function decide(
  desired: DesiredObject,
  entry: InventoryEntry | undefined,
  current: JsonMap | undefined,
): Step {
  // Present, yet neither in the inventory with a uid nor ever applied by gitfleet: somebody else's
  // object, even if it carries gitfleet's labels.
  if (current && !entry?.uid && !desired.policy.adopt && !appliedByGitfleet(current) && !madeBare(current))
    return { kind: "refuse" };
  const drift = current ? driftedPaths(desired.object, current) : [];
  if (!current || entry?.digest !== desired.digest) return { kind: "apply", drift };
  if (drift.length === 0) return { kind: "keep", action: "unchanged", drift };
  return desired.policy.selfHeal ? { kind: "apply", drift } : { kind: "keep", action: "drifted", drift };
}

// A Namespace gitfleet created bare for the objects in it.
export function madeBare(live: JsonMap): boolean {
  return (
    live.kind === "Namespace" &&
    asMap(asMap(live.metadata).annotations)[IMPLICIT_NAMESPACE_ANNOTATION] === "true"
  );
}

// gitfleet's field manager has applied this object before (an inventory lost, a crash before it was written).
export function appliedByGitfleet(live: JsonMap): boolean {
  const managed = asMap(live.metadata).managedFields;
  return (
    Array.isArray(managed) &&
    managed.some((m) => asMap(m).manager === FIELD_MANAGER && asMap(m).operation === "Apply")
  );
}
