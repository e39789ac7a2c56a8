import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { SECRET_DIGEST_ANNOTATION, SECRET_KEYS_ANNOTATION } from "../render/secrets.js";
import { APP_LABEL, MANAGED_BY, PLACEMENT_ANNOTATION } from "../render/tracking.js";
import { FIELD_MANAGER } from "../sync/field-manager.js";
import type { MemberClient, ObjectAddress } from "./member-client.js";
import { patchAsRead } from "./patch-as-read.js";

export type DetachOutcome = "detached" | "gone" | "failed";

/**
 * Stops managing one object and leaves it running: gitfleet's labels and annotations are removed,
 * and so is its field manager's entry in managedFields (the fields stay, owned by the other managers
 * or by none), so a later server-side apply by gitfleet would not remove anything. Conditional on the
 * resourceVersion read, so a concurrent change is not overwritten. Nothing is deleted, no pod restarts.
 */
export async function detachObject(
  client: MemberClient,
  address: ObjectAddress,
): Promise<{ outcome: DetachOutcome; error?: string }> {
  try {
    // Its own field manager: the patch must not make gitfleet an owner again.
    const done = await patchAsRead(client, address, `${FIELD_MANAGER}-detach`, detachPatch);
    return { outcome: done.outcome === "gone" ? "gone" : "detached" };
  } catch (error) {
    return { outcome: "failed", error: error instanceof Error ? error.message : String(error) };
  }
}

/** The merge patch that detaches a live object. Pure. */
export function detachPatch(live: JsonMap): JsonMap {
  const metadata = asMap(live.metadata);
  const others = asList(metadata.managedFields).filter((entry) => asMap(entry).manager !== FIELD_MANAGER);
  return {
    metadata: {
      resourceVersion: metadata.resourceVersion ?? null,
      labels: { [MANAGED_BY.key]: null, [APP_LABEL]: null },
      annotations: {
        [PLACEMENT_ANNOTATION]: null,
        [SECRET_DIGEST_ANNOTATION]: null,
        [SECRET_KEYS_ANNOTATION]: null,
      },
      // [{}] clears managedFields when gitfleet was the only manager.
      managedFields: others.length > 0 ? others : [{}],
    },
  };
}
