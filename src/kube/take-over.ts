import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { FIELD_MANAGER } from "../sync/field-manager.js";
import type { MemberClient, ObjectAddress } from "./member-client.js";
import { patchAsRead } from "./patch-as-read.js";

/**
 * After adopting an object, gitfleet becomes the only owner of the fields people set by hand: the
 * managedFields entries of other managers' plain writes (kubectl create/edit/patch, a script's
 * PUT) to the object itself are removed, so the next change gitfleet renders does not conflict with
 * them. Controllers' writes to subresources (status, scale) and other managers' server-side applies
 * stay: those owners still act on the object. Conditional on the resourceVersion read; nothing else
 * changes, no pod restarts. Returns the object as it is afterwards (undefined if it is gone).
 */
export async function takeOverFields(
  client: MemberClient,
  address: ObjectAddress,
): Promise<JsonMap | undefined> {
  const done = await patchAsRead(
    client,
    address,
    `${FIELD_MANAGER}-adopt`,
    (live) => takeOverPatch(live)?.patch,
  );
  return done.outcome === "gone" ? undefined : done.object;
}

/** The merge patch that leaves gitfleet the owner of the hand-set fields, if any other owns some. Pure. */
export function takeOverPatch(live: JsonMap): { patch: JsonMap; removed: string[] } | undefined {
  const metadata = asMap(live.metadata);
  const entries = asList(metadata.managedFields).map((e) => asMap(e));
  const byHand = (e: JsonMap) =>
    e.manager !== FIELD_MANAGER && e.operation === "Update" && (e.subresource ?? "") === "";
  const removed = entries.filter(byHand);
  if (removed.length === 0) return undefined;
  return {
    patch: {
      metadata: {
        resourceVersion: metadata.resourceVersion ?? null,
        managedFields: entries.filter((e) => !byHand(e)),
      },
    },
    removed: removed.map((e) => String(e.manager)),
  };
}
