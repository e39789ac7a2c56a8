import type { Inventory } from "../sync/inventory.js";
import { mapConcurrently } from "../util/map-concurrently.js";
import { type DetachOutcome, detachObject } from "./detach.js";
import { readInventory, writeInventory } from "./inventory-store.js";
import type { MemberClient } from "./member-client.js";

/** What detaching an app from one cluster did, per object. */
export interface DetachResult {
  readonly cluster: string;
  readonly app: string;
  readonly objects: readonly {
    readonly identity: string;
    readonly outcome: DetachOutcome;
    readonly error?: string;
  }[];
  readonly inventory: Inventory;
}

/**
 * Detaches every object of an app from one cluster (migration rollback): each is left running
 * without gitfleet's labels and ownership, and leaves the inventory, so no later prune can touch it.
 * Objects whose detach failed stay in the inventory, to be tried again.
 */
export async function detachApp(input: {
  readonly cluster: string;
  readonly client: MemberClient;
  readonly app: string;
  readonly sourceCommit: string;
  readonly knownInventory: Inventory;
}): Promise<DetachResult> {
  const stored = await readInventory(input.client, input.knownInventory);
  const inventory = new Map(stored.inventory);
  const entries = [...inventory.values()].filter((entry) => entry.app === input.app);
  const objects = await mapConcurrently(entries, 8, async (entry) => ({
    identity: entry.identity,
    ...(await detachObject(input.client, entry)),
  }));
  for (const object of objects) if (object.outcome !== "failed") inventory.delete(object.identity);
  const owner = { cluster: input.cluster, sourceCommit: input.sourceCommit, pruneBase: stored.pruneBase };
  await writeInventory(input.client, owner, inventory, stored.text);
  return { cluster: input.cluster, app: input.app, objects, inventory };
}
