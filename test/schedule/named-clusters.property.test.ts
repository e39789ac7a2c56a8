import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PlacementSpec, Toleration } from "../../src/model/types.js";
import type { FilterPlugin, Profile } from "../../src/schedule/framework.js";
import { DEFAULT_PROFILE } from "../../src/schedule/profile.js";
import { scheduleWorkload } from "../../src/schedule/schedule.js";
import { type ClusterInput, cluster, problem } from "../helpers/scheduling.js";

/**
 * A Placement that names its clusters (clusterAffinity.clusterNames) is filtered only on those and on
 * the clusters an earlier filter might not pass; the rest are counted under "not in clusterNames".
 * The decision — placement, summary counts, listed reasons, frozen clusters, errors — must be the one
 * a scheduler that filters every cluster gives.
 */

// The default profile without the shortcut: every filter runs on every cluster.
const FULL: Profile = {
  ...DEFAULT_PROFILE,
  filter: DEFAULT_PROFILE.filter.map(({ passesAny: _p, onlyNamed: _o, ...plugin }): FilterPlugin => plugin),
};

const NAMES = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];

const clusterArb = (name: string): fc.Arbitrary<ClusterInput> =>
  fc
    .record({
      ready: fc.boolean(),
      cordoned: fc.boolean(),
      taint: fc.constantFrom(undefined, "NoSchedule", "NoExecute", "Bogus"),
      env: fc.constantFrom("prod", "test"),
      region: fc.constantFrom("east", "west"),
      current: fc.nat({ max: 6 }),
      available: fc.option(fc.nat({ max: 12 }), { nil: undefined }),
    })
    .map((r) =>
      cluster(name, {
        region: r.region,
        labels: { env: r.env },
        ready: r.ready,
        unschedulable: r.cordoned,
        taints: r.taint === undefined ? [] : [{ key: "gpu", effect: r.taint as "NoSchedule" }],
        currentReplicas: r.current,
        ...(r.available === undefined ? {} : { availableReplicas: r.available }),
      }),
    );

const clustersArb = fc.subarray(NAMES, { minLength: 0 }).chain((names) => fc.tuple(...names.map(clusterArb)));

const placementArb: fc.Arbitrary<PlacementSpec> = fc
  .record({
    // Names may be missing from the fleet, repeated, or name none at all.
    names: fc.array(fc.constantFrom(...NAMES, "zz"), { maxLength: 4 }),
    exclude: fc.option(fc.subarray(NAMES, { maxLength: 2 }), { nil: undefined }),
    env: fc.option(fc.constantFrom("prod", "test"), { nil: undefined }),
    region: fc.constantFrom(undefined, ["east"], []),
    tolerate: fc.constantFrom<Toleration[] | undefined>(
      undefined,
      [{ operator: "Exists" }],
      [{ key: "gpu", operator: "Exists", effect: "NoSchedule" }],
    ),
    divided: fc.boolean(),
  })
  .map(({ names, exclude, env, region, tolerate, divided }) => ({
    clusterAffinity: {
      ...(names.length > 0 ? { clusterNames: names } : {}),
      ...(exclude ? { exclude } : {}),
      ...(env ? { labelSelector: { matchLabels: { env } } } : {}),
      ...(region
        ? { fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: region }] } }
        : {}),
    },
    ...(tolerate ? { tolerations: tolerate } : {}),
    replicaScheduling: { type: divided ? "Divided" : "Duplicated" },
  }));

describe("a Placement that names its clusters", () => {
  it("gets the decision of a scheduler that filters every cluster", () => {
    fc.assert(
      fc.property(placementArb, clustersArb, fc.nat({ max: 20 }), (placement, clusters, replicas) => {
        const p = problem(placement, clusters, replicas, { now: 1_000 });
        expect(scheduleWorkload(p)).toEqual(scheduleWorkload(p, FULL));
      }),
      { numRuns: 600 },
    );
  });

  it("is filtered on the named clusters and the irregular ones only", () => {
    let calls = 0;
    const counted: Profile = {
      ...DEFAULT_PROFILE,
      filter: DEFAULT_PROFILE.filter.map((plugin) =>
        plugin.name === "ClusterAffinity"
          ? {
              ...plugin,
              filter: (context, c) => {
                calls++;
                return plugin.filter(context, c);
              },
            }
          : plugin,
      ),
    };
    const fleet = Array.from({ length: 1000 }, (_, i) => cluster(`c-${String(i).padStart(4, "0")}`));
    const sick = [
      cluster("c-0500", { ready: false }),
      cluster("c-0501", { taints: [{ key: "x", effect: "NoSchedule" }] }),
    ];
    const clusters = [...fleet.slice(0, 500), ...sick, ...fleet.slice(502)];
    const placement: PlacementSpec = {
      clusterAffinity: { clusterNames: ["c-0007"] },
      tolerations: [{ operator: "Exists" }],
    };
    const result = scheduleWorkload(problem(placement, clusters, 3), counted);
    // c-0007, c-0500 (not Ready, so the earlier filters do not settle it) and c-0501 (its taint is tolerated).
    expect(calls).toBe(3);
    expect(result).toEqual(scheduleWorkload(problem(placement, clusters, 3), FULL));
    expect(result.ok && result.decision.diagnosis.summary).toBe(
      "1/1000 clusters available: 999 not in clusterNames",
    );
  });
});
