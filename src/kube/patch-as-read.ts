import type { JsonMap } from "../apimachinery/json.js";
import { MemberApiError, type MemberClient, type ObjectAddress } from "./member-client.js";

const MAX_ATTEMPTS = 5;

/**
 * Reads an object, asks `patchOf` for a merge patch from what it read (the patch carries that
 * resourceVersion, so a concurrent write is never overwritten), and applies it; a 409 — a
 * controller's status write got in between — reads again, a few times. Gone (404) is an answer,
 * other errors are thrown. Returns the object as it is afterwards.
 */
export async function patchAsRead(
  client: MemberClient,
  address: ObjectAddress,
  fieldManager: string,
  patchOf: (live: JsonMap) => JsonMap | undefined,
): Promise<{ outcome: "gone" } | { outcome: "unchanged" | "patched"; object: JsonMap }> {
  for (let attempt = 1; ; attempt++) {
    const done = await patchOnce(client, address, fieldManager, patchOf).catch((error: unknown) => {
      if (error instanceof MemberApiError && error.code === 404) return { outcome: "gone" as const };
      if (error instanceof MemberApiError && error.code === 409 && attempt < MAX_ATTEMPTS)
        return "again" as const;
      throw error;
    });
    if (done !== "again") return done;
  }
}

async function patchOnce(
  client: MemberClient,
  address: ObjectAddress,
  fieldManager: string,
  patchOf: (live: JsonMap) => JsonMap | undefined,
): Promise<{ outcome: "gone" } | { outcome: "unchanged" | "patched"; object: JsonMap }> {
  const live = await client.get(address);
  if (!live) return { outcome: "gone" };
  const patch = patchOf(live);
  if (!patch) return { outcome: "unchanged", object: live };
  return { outcome: "patched", object: await client.mergePatch(address, patch, fieldManager) };
}
