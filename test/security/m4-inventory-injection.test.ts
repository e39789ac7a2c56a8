import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { inventoryFromData, inventoryFromStatus } from "../../src/sync/inventory.js";
import { desiredObject, syncMember } from "../helpers/member-sync.js";

/**
 * M4 (security audit): the inventory was space-separated text, so a kind or an RBAC name with spaces
 * or slashes wrote lines of its own — an entry naming any object with no uid check, or an RBAC
 * object orphaned. The inventory is now structured data whose identity is derived from validated
 * fields; an entry that does not validate is dropped and so never deleted.
 */

describe("M4: no name or kind can write an inventory entry of its own", () => {
  it("the audit's injected kind, in the structured inventory, is dropped", () => {
    const { inventory } = inventoryFromData({
      entries: JSON.stringify([
        {
          apiVersion: "v1",
          kind: "ConfigMap/kube-system/coredns v1 evil - - x",
          namespace: "shop",
          name: "n",
          app: "evil",
          uid: "",
          digest: "",
        },
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          namespace: "kube-system",
          name: "coredns\nv1",
          app: "evil",
          uid: "",
          digest: "",
        },
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          namespace: "shop",
          name: "fine",
          app: "web",
          uid: "u-1",
          digest: "",
        },
      ]),
    });
    expect([...inventory.keys()]).toEqual(["/ConfigMap/shop/fine"]);
  });

  it("the audit's injected legacy line (old inventories are still read) is dropped", () => {
    const { inventory } = inventoryFromData({
      inventory:
        "/ConfigMap/kube-system/coredns v1 evil - - x/shop/n v1 evil - -\n/ConfigMap/shop/ok v1 web u-1 -",
    });
    expect([...inventory.keys()]).toEqual(["/ConfigMap/shop/ok"]);
  });

  it("drops entries from a status file that do not validate", () => {
    const record = inventoryFromStatus({
      cluster: "east",
      entries: [
        {
          apiVersion: "v1",
          kind: "Secret",
          namespace: "Kube System",
          name: "x",
          app: "evil",
          uid: "",
          digest: "",
        },
        {
          apiVersion: "core/v1",
          kind: "Secret",
          namespace: "x",
          name: "x",
          app: "evil",
          uid: "",
          digest: "",
        },
        {
          apiVersion: "v1",
          kind: "Secret",
          namespace: "x",
          name: "x",
          app: "constructor",
          uid: "",
          digest: "",
        },
      ],
    });
    expect(record.inventory.size).toBe(0);
  });

  describe("through a member", () => {
    let member: SimulatedMember;
    beforeEach(async () => {
      member = await startMember({ name: "east" });
    });
    afterEach(() => member.close());

    it("a Role whose name has spaces round-trips: it is pruned, not orphaned", async () => {
      const role = desiredObject({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "evil v1 x - -", namespace: "shop" },
        rules: [],
      });
      const namespace = desiredObject(
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } },
        "platform",
      );
      const filler = ["a", "b", "c"].map((n) =>
        desiredObject({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: n, namespace: "shop" },
          data: {},
        }),
      );
      const first = await syncMember(member, [namespace, role, ...filler]);
      expect(first.inventory.get("rbac.authorization.k8s.io/Role/shop/evil v1 x - -")?.uid).not.toBe("");
      const second = await syncMember(member, [namespace, ...filler]);
      expect(second.pruned).toEqual([
        { identity: "rbac.authorization.k8s.io/Role/shop/evil v1 x - -", app: "web", outcome: "deleted" },
      ]);
      const configMap = await (
        await fetch(`${member.url}/api/v1/namespaces/gitfleet-system/configmaps/gitfleet-inventory`)
      ).json();
      expect(asMap(asMap(configMap).data).cluster).toBe("east");
    });
  });
});
