import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import { readInventory, writeInventory } from "../../src/kube/inventory-store.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { INVENTORY_CONFIGMAP, INVENTORY_NAMESPACE, inventoryPartName } from "../../src/sync/inventory.js";
import { inventoryEntry, inventoryOf } from "../helpers/inventory-entries.js";

/**
 * The inventory in a member (a simulated one, over HTTP): split over part ConfigMaps when it is
 * large, read back whole, its parts rewritten only when they changed, the parts it no longer needs
 * deleted, and a part that is not the one its main ConfigMap names read as no inventory at all — the
 * status branch's (uid-guarded) is used instead.
 */
let member: SimulatedMember;
let client: MemberClient;
beforeEach(async () => {
  member = await startMember({ name: "east" });
  client = new MemberClient("east", memberClientConfig(member), { retries: 0, timeoutMs: 5_000 });
});
afterEach(async () => member.close());

// Part sizes small enough that tens of entries need several parts.
const PART_BYTES = 2_048;
const RECORD = { cluster: "east", sourceCommit: "b".repeat(40), pruneBase: undefined };

const configMapNames = async () =>
  ((await client.list("v1", "ConfigMap", "", `metadata.namespace=${INVENTORY_NAMESPACE}`)) ?? [])
    .map((c) => String(asMap(c.metadata).name))
    .sort();
const resourceVersion = async (name: string) =>
  asMap(
    (await client.get({ apiVersion: "v1", kind: "ConfigMap", namespace: INVENTORY_NAMESPACE, name }))
      ?.metadata,
  ).resourceVersion;

describe("the inventory in a member", () => {
  it("splits a large inventory over parts, reads it back, rewrites only changed parts and deletes unneeded ones", async () => {
    const large = inventoryOf(60);
    const text = await writeInventory(client, RECORD, large, undefined, PART_BYTES);
    const names = await configMapNames();
    const parts = names.filter((n) => n.startsWith(`${INVENTORY_CONFIGMAP}-part-`));
    expect(parts.length).toBeGreaterThan(2);
    const read = await readInventory(client, new Map());
    expect(read.inventory).toEqual(large);
    expect(read.text).toBe(text);
    expect(read.owner).toBe("east");

    // One more entry at the end changes the last part only.
    const first = await resourceVersion(inventoryPartName(1));
    const grown = inventoryOf(61);
    const next = await writeInventory(client, RECORD, grown, text, PART_BYTES);
    expect(await resourceVersion(inventoryPartName(1))).toBe(first);
    expect((await readInventory(client, new Map())).inventory).toEqual(grown);

    // Back to a handful: the main ConfigMap holds them, and every part is gone.
    const small = inventoryOf(3);
    await writeInventory(client, RECORD, small, next, PART_BYTES);
    expect(await configMapNames()).toEqual([INVENTORY_CONFIGMAP]);
    expect((await readInventory(client, new Map())).inventory).toEqual(small);
  });

  it("reads a part that is not the one named as no inventory, and writes it whole again", async () => {
    await writeInventory(client, RECORD, inventoryOf(60), undefined, PART_BYTES);
    await client.apply(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: inventoryPartName(2), namespace: INVENTORY_NAMESPACE },
        data: { entries: "[]" },
      },
      true,
      "someone",
    );
    // The status branch's inventory stands in, without entries it has no uid for.
    const known = new Map([...inventoryOf(2)].map(([id, e], i) => [id, i === 0 ? e : { ...e, uid: "" }]));
    const read = await readInventory(client, known);
    expect([...read.inventory.keys()]).toEqual([inventoryEntry(0).identity]);
    expect(read.text).toBeUndefined();
    expect(read.owner).toBe("east");
    // The next write puts every part back.
    await writeInventory(client, RECORD, inventoryOf(60), read.text, PART_BYTES);
    expect((await readInventory(client, new Map())).inventory).toEqual(inventoryOf(60));
  });
});
