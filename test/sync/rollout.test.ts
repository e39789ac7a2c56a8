import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../src/model/types.js";
import {
  type ClusterRolloutState,
  maxUnavailable,
  rolloutGate,
  rolloutOrder,
} from "../../src/sync/rollout.js";

const state = (updated: boolean, healthy: boolean, updatingForMs?: number): ClusterRolloutState => ({
  updated,
  healthy,
  ...(updatingForMs === undefined ? {} : { updatingForMs }),
});
const states = (entries: Record<string, ClusterRolloutState>) => new Map(Object.entries(entries));
const ORDER = ["a", "b", "c", "d"];

describe("Serial rollout", () => {
  const serial = { strategy: "Serial" as const };
  it("passes over an unreachable cluster (or one failover moves the app off)", () => {
    const gate = rolloutGate(
      ORDER,
      serial,
      states({ a: { updated: false, healthy: false, passedOver: true }, b: state(true, true) }),
      undefined,
    );
    expect([...gate.allowed].sort()).toEqual(["a", "b", "c"]);
    expect(Object.fromEntries(gate.held)).toEqual({ d: "waiting for c to be Healthy" });
    const parallel = rolloutGate(
      ORDER,
      { strategy: "Parallel", maxUnavailableClusters: 1 },
      states({ a: { updated: false, healthy: false, passedOver: true } }),
      undefined,
    );
    expect([...parallel.allowed].sort()).toEqual(["a", "b"]);
  });

  it.each([
    ["nothing updated: only the first", {}, ["a"], { b: "waiting for a to be Healthy" }],
    [
      "the first updated but progressing",
      { a: state(true, false) },
      ["a"],
      { c: "waiting for a to be Healthy" },
    ],
    [
      "the first Healthy: the second goes",
      { a: state(true, true) },
      ["a", "b"],
      { c: "waiting for b to be Healthy" },
    ],
    [
      "all settled",
      { a: state(true, true), b: state(true, true), c: state(true, true), d: state(true, true) },
      ORDER,
      {},
    ],
    [
      "an unhealthy cluster in the middle stops the rest",
      { a: state(true, true), b: state(true, false), c: state(true, true) },
      ["a", "b"],
      { c: "waiting for b to be Healthy", d: "waiting for b to be Healthy" },
    ],
  ] as const)("%s", (_name, given, allowed, held) => {
    const gate = rolloutGate(ORDER, serial, states(given), undefined);
    expect([...gate.allowed]).toEqual(allowed);
    for (const [cluster, reason] of Object.entries(held)) expect(gate.held.get(cluster)).toBe(reason);
    expect(gate.halted).toBeUndefined();
  });

  it("halts at a cluster that does not get Healthy within the timeout", () => {
    const gate = rolloutGate(
      ORDER,
      serial,
      states({ a: state(true, true), b: state(true, false, 61_000) }),
      60_000,
    );
    expect(gate.halted).toBe("b");
    expect([...gate.allowed]).toEqual(["a", "b"]);
    expect(gate.held.get("c")).toBe("rollout halted: b did not become Healthy in time");
  });
});

describe("Parallel rollout", () => {
  it.each([
    ["no limit: everything at once", undefined, {}, ORDER],
    ["one at a time", 1, {}, ["a"]],
    ["one at a time, the first settled", 1, { a: state(true, true) }, ["a", "b"]],
    ["one at a time, the first still updating", 1, { a: state(true, false) }, ["a"]],
    ["50% of 4", "50%", { a: state(true, false) }, ["a", "b"]],
    ["25% of 3 rounds down but never below one", "25%", {}, ["a"]],
  ] as const)("%s", (_name, max, given, allowed) => {
    const spec = {
      strategy: "Parallel" as const,
      ...(max === undefined ? {} : { maxUnavailableClusters: max }),
    };
    expect([
      ...rolloutGate(max === "25%" ? ORDER.slice(0, 3) : ORDER, spec, states(given), undefined).allowed,
    ]).toEqual(allowed);
  });

  it("never has more than maxUnavailableClusters clusters updating (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ updated: fc.boolean(), healthy: fc.boolean() }), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 5 }),
        (list, max) => {
          const order = list.map((_, i) => `c${i}`);
          const given = new Map(order.map((c, i) => [c, list[i] as ClusterRolloutState]));
          const gate = rolloutGate(
            order,
            { strategy: "Parallel", maxUnavailableClusters: max },
            given,
            undefined,
          );
          const updating = order.filter(
            (c) => gate.allowed.has(c) && !(given.get(c)?.updated && given.get(c)?.healthy),
          );
          const alreadyUpdating = order.filter((c) => given.get(c)?.updated && !given.get(c)?.healthy).length;
          expect(updating.length).toBeLessThanOrEqual(Math.max(max, alreadyUpdating));
          for (const c of order) if (given.get(c)?.updated) expect(gate.allowed.has(c)).toBe(true);
          expect(gate.allowed.size + gate.held.size).toBe(order.length);
        },
      ),
    );
  });
});

describe("rolloutOrder and maxUnavailable", () => {
  const cluster = (name: string, env: string): Cluster =>
    ({
      apiVersion: "gitfleet.io/v1alpha1",
      kind: "Cluster",
      metadata: { name, labels: { env } },
      spec: {},
    }) as unknown as Cluster;
  const clusters = [
    cluster("prod-1", "prod"),
    cluster("stage-1", "staging"),
    cluster("dev-1", "dev"),
    cluster("prod-0", "prod"),
  ];
  const names = clusters.map((c) => c.metadata.name);

  it("puts listed clusters first in their order, the rest by name", () => {
    expect(rolloutOrder(clusters, names, { order: ["stage-1", "prod-1"] })).toEqual([
      "stage-1",
      "prod-1",
      "dev-1",
      "prod-0",
    ]);
  });

  it("orders by a label's value, then by name", () => {
    expect(rolloutOrder(clusters, names, { orderByLabel: "env" })).toEqual([
      "dev-1",
      "prod-0",
      "prod-1",
      "stage-1",
    ]);
  });

  it.each([
    [undefined, 7, 7],
    [2, 7, 2],
    ["25%", 8, 2],
    ["10%", 3, 1],
  ] as const)("maxUnavailable(%j, %i) = %i", (value, total, expected) => {
    expect(maxUnavailable(value, total)).toBe(expected);
  });
});
