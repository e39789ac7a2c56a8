import { asMap } from "../apimachinery/json.js";
import { MANAGED_BY } from "../render/tracking.js";
import {
  INVENTORY_CONFIGMAP,
  INVENTORY_NAMESPACE,
  type Inventory,
  type InventoryOwner,
  inventoryData,
  inventoryFromData,
} from "../sync/inventory.js";
import type { MemberClient } from "./member-client.js";

// The member's inventory: its owner, prune base and entries, and its data as text (to skip writes
// that change nothing). A member without one falls back to the inventory the status branch holds —
// entries without a uid left out, since nothing would guard their deletion.
export async function readInventory(
  client: MemberClient,
  known: Inventory,
): Promise<{
  inventory: Inventory;
  text: string | undefined;
  owner: string | undefined;
  pruneBase: string | undefined;
}> {
  const configMap = await client.get({
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace: INVENTORY_NAMESPACE,
    name: INVENTORY_CONFIGMAP,
  });
  if (!configMap) {
    const guarded = new Map([...known].filter(([, entry]) => entry.uid !== ""));
    return { inventory: guarded, text: undefined, owner: undefined, pruneBase: undefined };
  }
  const data = asMap(configMap.data);
  const record = inventoryFromData(data);
  return {
    inventory: record.inventory,
    text: JSON.stringify(data),
    owner: record.cluster,
    pruneBase: record.pruneBase,
  };
}

// Writes the inventory ConfigMap (and its namespace) when its data changed; returns the data written.
export async function writeInventory(
  client: MemberClient,
  record: InventoryOwner,
  inventory: Inventory,
  previous: string | undefined,
): Promise<string> {
  const data = inventoryData(record, inventory);
  const text = JSON.stringify(data);
  if (text === previous) return text;
  await writeSystemConfigMap(client, INVENTORY_CONFIGMAP, data, previous === undefined);
  return text;
}

/** Applies a ConfigMap of gitfleet's in gitfleet-system (the namespace too, the first time). */
export async function writeSystemConfigMap(
  client: MemberClient,
  name: string,
  data: Record<string, string>,
  first: boolean,
): Promise<void> {
  const labels = { [MANAGED_BY.key]: MANAGED_BY.value };
  if (first)
    await client.apply(
      { apiVersion: "v1", kind: "Namespace", metadata: { name: INVENTORY_NAMESPACE, labels } },
      true,
    );
  await client.apply(
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: INVENTORY_NAMESPACE, labels }, data },
    true,
  );
}
