import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { appConfigMap, syncMember } from "../helpers/member-sync.js";

/**
 * M5 (security audit): an object gitfleet adopted (conflictResolution: Adopt) entered the inventory
 * like one it created, so removing its template deleted it — a kube-system ConfigMap gone in two
 * commits, no token. Adopted objects are now recorded as adopted and never deleted without a token.
 */

describe("M5: adopted objects are never deleted without a token", () => {
  let member: SimulatedMember;
  beforeEach(async () => {
    member = await startMember({ name: "east" });
  });
  afterEach(() => member.close());

  it("adopts, records it adopted, and blocks its deletion until a token allows it", async () => {
    const others = ["a", "b", "c", "d", "e"].map((n) => appConfigMap(n, "web"));
    await syncMember(member, others);
    // Somebody's object, made by hand in the same namespace: gitfleet did not create it.
    const created = await fetch(`${member.url}/api/v1/namespaces/shop/configmaps`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "foreign-critical", namespace: "shop" },
      }),
    });
    expect(created.status).toBe(201);
    const foreign = appConfigMap("foreign-critical", "web", { adopt: true });
    const adopted = await syncMember(member, [...others, foreign]);
    expect(adopted.inventory.get("/ConfigMap/shop/foreign-critical")?.adopted).toBe(true);
    // Its template removed: one object of six, within the budget — yet blocked, because it was adopted.
    const removed = await syncMember(member, others);
    expect(removed.pruned).toEqual([]);
    expect(removed.pruneBlocked?.reasons).toEqual([
      "would delete what gitfleet adopted and did not create: ConfigMap shop/foreign-critical",
    ]);
    expect((await fetch(`${member.url}/api/v1/namespaces/shop/configmaps/foreign-critical`)).status).toBe(
      200,
    );
    const token = removed.pruneBlocked?.token as string;
    const allowed = await syncMember(member, others, {
      prune: { maxDeletionPercent: 30, allowedTokens: new Set([token]), appPrunes: () => true },
    });
    expect(allowed.pruned.map((p) => p.outcome)).toEqual(["deleted"]);
  });
});
