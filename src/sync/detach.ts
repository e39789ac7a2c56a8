import { asList, asMap, type JsonMap } from "../model/json.js";
import { SECRET_DIGEST_ANNOTATION } from "../render/secrets.js";
import { APP_LABEL, MANAGED_BY, PLACEMENT_ANNOTATION } from "../render/tracking.js";
import { FIELD_MANAGER, MemberApiError, type MemberClient, type ObjectAddress } from "./member-client.js";

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
  // Controllers write status all the time: a conflict on the resourceVersion read means "read again".
  for (let attempt = 1; ; attempt++) {
    const outcome = await detachOnce(client, address).catch((error: unknown) => afterFailure(error, attempt));
    if (outcome !== "again") return outcome;
  }
}

function afterFailure(error: unknown, attempt: number): { outcome: DetachOutcome; error?: string } | "again" {
  const status = error instanceof MemberApiError ? error.code : undefined;
  if (status === 404) return { outcome: "gone" };
  if (status === 409 && attempt < MAX_ATTEMPTS) return "again";
  return { outcome: "failed", error: error instanceof Error ? error.message : String(error) };
}

async function detachOnce(client: MemberClient, address: ObjectAddress): Promise<{ outcome: DetachOutcome }> {
  const live = await client.get(address);
  if (!live) return { outcome: "gone" };
  // Its own field manager: the patch must not make gitfleet an owner again.
  await client.mergePatch(address, detachPatch(live), `${FIELD_MANAGER}-detach`);
  return { outcome: "detached" };
}

const MAX_ATTEMPTS = 5;

/** The merge patch that detaches a live object. Pure. */
export function detachPatch(live: JsonMap): JsonMap {
  const metadata = asMap(live.metadata);
  const others = asList(metadata.managedFields).filter((entry) => asMap(entry).manager !== FIELD_MANAGER);
  return {
    metadata: {
      resourceVersion: metadata.resourceVersion ?? null,
      labels: { [MANAGED_BY.key]: null, [APP_LABEL]: null },
      annotations: { [PLACEMENT_ANNOTATION]: null, [SECRET_DIGEST_ANNOTATION]: null },
      // [{}] clears managedFields when gitfleet was the only manager.
      managedFields: others.length > 0 ? others : [{}],
    },
  };
}
