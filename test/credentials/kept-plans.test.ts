import { describe, expect, it } from "vitest";
import { KeptPlans } from "../../src/credentials/kept-plans.js";
import { resolveControlPlane } from "../../src/model/controlplane/hosted-control-plane.js";
import type { Cluster, ControlPlaneClass } from "../../src/model/types.js";

const CLASS: ControlPlaneClass = {
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "ControlPlaneClass",
  metadata: { name: "standard" },
  spec: { version: "v1.34.1", etcd: { version: "3.6.4-0" } },
  origin: { file: "controlplanes/standard.yaml", index: 0 },
};

function plane(address: string) {
  const cluster: Cluster = {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Cluster",
    metadata: { name: "pc-1" },
    spec: { controlPlane: { host: "meta-1", class: "standard", expose: { type: "LoadBalancer", address } } },
    origin: { file: "clusters/pc-1.yaml", index: 0 },
  };
  return resolveControlPlane(cluster, new Map([["standard", CLASS]])) as NonNullable<
    ReturnType<typeof resolveControlPlane>
  >;
}

describe("plans that wrote nothing", () => {
  it.each([
    ["the same inputs", plane("203.0.113.1"), new Map([["ns/a", { k: "v" }]]), undefined, true],
    ["another address", plane("203.0.113.2"), new Map([["ns/a", { k: "v" }]]), undefined, false],
    ["a Secret's value changed", plane("203.0.113.1"), new Map([["ns/a", { k: "w" }]]), undefined, false],
    ["another Secret", plane("203.0.113.1"), new Map([["ns/b", { k: "v" }]]), undefined, false],
    [
      "a shared etcd's CA",
      plane("203.0.113.1"),
      new Map([["ns/a", { k: "v" }]]),
      { pem: "x", changed: false },
      false,
    ],
  ])("are keyed by every input: %s", (_, p, existing, etcd, same) => {
    const base = KeptPlans.key(plane("203.0.113.1"), new Map([["ns/a", { k: "v" }]]), undefined);
    expect(KeptPlans.key(p, existing, etcd) === base).toBe(same);
  });

  it("keys Secrets by name, not by the order they were read in", () => {
    const p = plane("203.0.113.1");
    const one = new Map([
      ["ns/a", { k: "1" }],
      ["ns/b", { k: "2" }],
    ]);
    const other = new Map([
      ["ns/b", { k: "2" }],
      ["ns/a", { k: "1" }],
    ]);
    expect(KeptPlans.key(p, one, undefined)).toBe(KeptPlans.key(p, other, undefined));
  });

  it.each([
    [999, "kept"],
    [1000, undefined],
    [1001, undefined],
  ])("are served before `until` only: at %i", (now, served) => {
    const plans = new KeptPlans<string>(4);
    plans.set("k", "kept", 1000);
    expect(plans.get("k", now)).toBe(served);
  });

  it("hold at most their capacity, the least recently used going first", () => {
    const plans = new KeptPlans<string>(2);
    plans.set("a", "A", 10);
    plans.set("b", "B", 10);
    expect(plans.get("a", 0)).toBe("A");
    plans.set("c", "C", 10);
    expect(plans.size).toBe(2);
    expect(plans.get("b", 0)).toBeUndefined();
    expect(plans.get("a", 0)).toBe("A");
    expect(plans.get("c", 0)).toBe("C");
  });
});
