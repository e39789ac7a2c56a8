import { asMap, type JsonMap } from "../apimachinery/json.js";
import { MANAGED_BY } from "../render/tracking.js";
import {
  INVENTORY_CONFIGMAP,
  INVENTORY_NAMESPACE,
  INVENTORY_PART_BYTES,
  type Inventory,
  type InventoryOwner,
  type InventoryRecord,
  inventoryConfigMaps,
  inventoryFromConfigMaps,
  inventoryFromData,
  inventoryPartDigests,
  inventoryPartName,
} from "../sync/inventory.js";
import type { MemberClient } from "./member-client.js";

// The member's inventory: its owner, prune base and entries, and its main ConfigMap's data as text (to
// skip writes that change nothing; for a large inventory it names every part by digest). A member
// without one — or whose parts are not the ones its main ConfigMap names — falls back to the
// inventory the status branch holds, entries without a uid left out, since nothing would guard their
// deletion.
export async function readInventory(
  client: MemberClient,
  known: Inventory,
): Promise<{
  inventory: Inventory;
  text: string | undefined;
  owner: string | undefined;
  pruneBase: string | undefined;
}> {
  const configMap = await client.get(inventoryRef(INVENTORY_CONFIGMAP));
  const data = configMap ? asMap(configMap.data) : undefined;
  const record = data ? await readRecord(client, data) : undefined;
  if (!data || !record) {
    const guarded = new Map([...known].filter(([, entry]) => entry.uid !== ""));
    return {
      inventory: guarded,
      // A torn inventory is written again in full; its owner still counts.
      text: undefined,
      owner: data ? inventoryFromData(data).cluster : undefined,
      pruneBase: undefined,
    };
  }
  return {
    inventory: record.inventory,
    text: JSON.stringify(data),
    owner: record.cluster,
    pruneBase: record.pruneBase,
  };
}

async function readRecord(client: MemberClient, main: JsonMap): Promise<InventoryRecord | undefined> {
  const digests = inventoryPartDigests(main);
  if (digests === undefined) return undefined;
  const parts: (JsonMap | undefined)[] = [];
  for (let i = 1; i <= digests.length; i++) {
    const part = await client.get(inventoryRef(inventoryPartName(i)));
    parts.push(part ? asMap(part.data) : undefined);
  }
  return inventoryFromConfigMaps(main, parts);
}

// Writes the inventory's ConfigMaps (and its namespace) when its data changed — changed parts first,
// the main ConfigMap last, then the parts it no longer names are deleted; returns the main data written.
export async function writeInventory(
  client: MemberClient,
  record: InventoryOwner,
  inventory: Inventory,
  previous: string | undefined,
  partBytes = INVENTORY_PART_BYTES,
): Promise<string> {
  const { main, parts } = inventoryConfigMaps(record, inventory, partBytes);
  const text = JSON.stringify(main);
  if (text === previous) return text;
  const before = previousDigests(previous);
  const digests = inventoryPartDigests(main) ?? [];
  let first = previous === undefined;
  for (const [i, entries] of parts.entries()) {
    if (before[i] !== undefined && before[i] === digests[i]) continue;
    await writeSystemConfigMap(client, inventoryPartName(i + 1), { entries }, first);
    first = false;
  }
  await writeSystemConfigMap(client, INVENTORY_CONFIGMAP, main, first);
  for (let i = parts.length + 1; i <= before.length; i++)
    await client.delete(inventoryRef(inventoryPartName(i)), "");
  return text;
}

// The part digests the main ConfigMap last written named (none when it held its entries or is unknown).
function previousDigests(previous: string | undefined): readonly string[] {
  if (previous === undefined) return [];
  try {
    return inventoryPartDigests(asMap(JSON.parse(previous))) ?? [];
  } catch {
    return [];
  }
}

function inventoryRef(name: string) {
  return { apiVersion: "v1", kind: "ConfigMap", namespace: INVENTORY_NAMESPACE, name } as const;
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
