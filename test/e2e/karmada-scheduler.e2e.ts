import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { ReplicaScheduling } from "../../src/model/types.js";
import { scheduleWorkload } from "../../src/schedule/schedule.js";
import type { ClusterState } from "../../src/schedule/types.js";
import { cluster } from "../helpers/scheduling.js";

/**
 * gitfleet's division against Karmada's own: karmada/main.go runs core.NewGenericScheduler of
 * github.com/karmada-io/karmada v1.16.0 (in-tree plugins, general estimator) on the same random
 * cases. Where Karmada schedules, the replicas per cluster must be the same. Where it does not
 * (capacity short: Karmada fails the round and keeps the old result), gitfleet places what fits
 * and reports the rest — a deliberate difference, counted, not compared.
 */

const BUILD = fileURLToPath(new URL("./karmada/build.sh", import.meta.url));
const NAMES = ["m1", "m2", "m3", "m4", "m5"];
const SEED = 20261201;

interface Case {
  readonly clusters: readonly { readonly name: string; readonly free: number }[];
  readonly replicas: number;
  readonly division: "static" | "dynamic" | "aggregated";
  readonly weights: Readonly<Record<string, number>>;
  readonly current: Readonly<Record<string, number>>;
  readonly rebalance: boolean;
  readonly uid: string;
}

const caseArb = (division: Case["division"]): fc.Arbitrary<Case> =>
  fc.integer({ min: 2, max: NAMES.length }).chain((n) =>
    fc.record({
      clusters: fc.tuple(
        ...NAMES.slice(0, n).map((name) => fc.nat({ max: 30 }).map((free) => ({ name, free }))),
      ),
      replicas: fc.integer({ min: 1, max: 60 }),
      division: fc.constant(division),
      weights: fc
        .tuple(...NAMES.slice(0, n).map(() => fc.integer({ min: 1, max: 5 })))
        .map((ws) => Object.fromEntries(ws.map((w, i) => [NAMES[i] as string, w]))),
      current: fc
        .tuple(...NAMES.slice(0, n).map(() => fc.oneof(fc.constant(0), fc.nat({ max: 20 }))))
        .map((cs) => Object.fromEntries(cs.flatMap((c, i) => (c > 0 ? [[NAMES[i] as string, c]] : [])))),
      rebalance: fc.boolean(),
      uid: fc.uuid(),
    }),
  );

function gitfleet(c: Case): Record<string, number> | string {
  const scheduling: ReplicaScheduling =
    c.division === "static"
      ? {
          type: "Divided",
          divisionPreference: "Weighted",
          weightPreference: {
            staticWeightList: Object.entries(c.weights).map(([name, weight]) => ({
              targetCluster: { clusterNames: [name] },
              weight,
            })),
          },
        }
      : c.division === "dynamic"
        ? {
            type: "Divided",
            divisionPreference: "Weighted",
            weightPreference: { dynamicWeight: "AvailableReplicas" },
          }
        : { type: "Divided", divisionPreference: "Aggregated" };
  const clusters: ClusterState[] = c.clusters.map(({ name }) => cluster(name));
  const result = scheduleWorkload({
    workload: { apiVersion: "apps/v1", kind: "Deployment", namespace: "shop", name: "web", uid: c.uid },
    replicas: c.replicas,
    placement: {
      clusterAffinity: { clusterNames: c.clusters.map((k) => k.name) },
      replicaScheduling: scheduling,
    },
    clusters,
    current: c.current,
    // Karmada's static weights ignore capacity; its dynamic divisions use the estimator's counts.
    ...(c.division === "static"
      ? {}
      : { available: Object.fromEntries(c.clusters.map((k) => [k.name, k.free])) }),
    ...(c.rebalance ? { rebalance: true } : {}),
  });
  if (!result.ok) return result.error;
  return result.decision.unschedulable > 0
    ? `unschedulable ${result.decision.unschedulable}`
    : { ...result.decision.clusters };
}

let oracle = "";
beforeAll(() => {
  oracle = execFileSync("bash", [BUILD], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;
}, 900_000);

function karmada(cases: readonly Case[]): { clusters?: Record<string, number>; error?: string }[] {
  const input = cases.map((c) => JSON.stringify(c)).join("\n");
  const output = execFileSync(oracle, [], {
    input,
    encoding: "utf8",
    maxBuffer: 64 * 2 ** 20,
    stdio: ["pipe", "pipe", "ignore"],
  });
  return output
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { clusters?: Record<string, number>; error?: string });
}

describe("gitfleet's division against Karmada v1.16.0's scheduler", () => {
  it.each(["static", "dynamic", "aggregated"] as const)(
    "agrees on every %s case Karmada schedules",
    (division) => {
      const cases = fc.sample(caseArb(division), { numRuns: 300, seed: SEED });
      const answers = karmada(cases);
      let compared = 0;
      const disagreements: string[] = [];
      cases.forEach((c, i) => {
        const theirs = answers[i];
        if (!theirs || theirs.error !== undefined) return;
        compared++;
        const ours = gitfleet(c);
        if (JSON.stringify(ours) !== JSON.stringify(sorted(theirs.clusters ?? {})))
          disagreements.push(
            `${JSON.stringify(c)}\n  karmada ${JSON.stringify(theirs.clusters)}\n  gitfleet ${JSON.stringify(ours)}`,
          );
      });
      console.log(
        `karmada parity (${division}): ${compared}/${cases.length} cases Karmada schedules, ${disagreements.length} disagree`,
      );
      expect(disagreements.slice(0, 3)).toEqual([]);
      expect(compared).toBeGreaterThan(100);
    },
  );
});

function sorted(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}
