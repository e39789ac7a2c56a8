import { describe, expect, it } from "vitest";
import type { ClusterPlan, Plan, UnplacedReplicas } from "../../src/plan/plan.js";
import { formatInvalidHeadMarkdown, planVerdict } from "../../src/plan/plan-verdict.js";
import { describeShortfall, shortfallOf } from "../../src/schedule/shortfall.js";

const object = {
  path: "rendered/east/shop/apps.Deployment.web.yaml",
  app: "web",
  object: "Deployment shop/web",
  secret: false,
};
const cluster = (name: string, extra: Partial<ClusterPlan> = {}): ClusterPlan => ({
  cluster: name,
  added: [],
  changed: [],
  removed: [],
  filteredOut: [],
  frozen: [],
  ...extra,
});
const plan = (clusters: ClusterPlan[], changed = true): Plan => ({ clusters, distributions: [], changed });
// A workload with `unplaced` of 60 replicas fitting nowhere (0: all fit again, `before` did not).
const short = (unplaced: number, before = 0): UnplacedReplicas => ({
  app: "game",
  workload: "Deployment games/game",
  unplaced,
  replicas: 60,
  fits: 60 - unplaced,
  bounds: ["cpu"],
  before,
  message:
    unplaced > 0
      ? describeShortfall("Deployment games/game", {
          unplaced,
          replicas: 60,
          fits: 60 - unplaced,
          bounds: ["cpu"],
        })
      : "all 60 replicas of Deployment games/game fit (12 fit nowhere before)",
});

describe("planVerdict", () => {
  it.each([
    {
      name: "an invalid head",
      outcome: { error: "\nrepo@head: 2 errors\napps/web/app.yaml:3:1: error: bad\n" },
      verdict: { ok: false, description: "invalid: repo@head: 2 errors" },
    },
    {
      name: "a blocked prune",
      outcome: {
        plan: plan([
          cluster("east", { changed: [object] }),
          cluster("south", { removed: [object], pruneBlocked: { token: "prune-1", reasons: ["too many"] } }),
          cluster("west", { removed: [object], pruneBlocked: { token: "prune-2", reasons: ["too many"] } }),
        ]),
      },
      verdict: {
        ok: false,
        description: "prune blocked in south, west: over the deletion budget, allow it in fleet.yaml",
      },
    },
    {
      name: "a change",
      outcome: {
        plan: plan([
          cluster("east", { changed: [object] }),
          cluster("west"),
          cluster("south", { added: [object] }),
        ]),
      },
      verdict: { ok: true, description: "2 clusters change" },
    },
    {
      name: "one cluster allowed to prune",
      outcome: { plan: plan([cluster("east", { removed: [object], pruneAllowedBy: "prune-1" })]) },
      verdict: { ok: true, description: "1 cluster change" },
    },
    {
      name: "no change",
      outcome: { plan: plan([], false) },
      verdict: { ok: true, description: "no changes: every cluster gets what it gets now" },
    },
    {
      name: "replicas that fit nowhere, warned (the default)",
      outcome: { plan: { ...plan([cluster("east", { changed: [object] })]), unplaced: [short(12)] } },
      verdict: { ok: true, description: `1 cluster change; ${short(12).message}` },
    },
    {
      name: "replicas that fit nowhere, under Fail",
      outcome: {
        plan: {
          ...plan([cluster("east", { changed: [object] })]),
          unplaced: [short(1)],
          unplacedPolicy: "Fail" as const,
        },
      },
      verdict: { ok: false, description: short(1).message },
    },
    {
      name: "every replica fitting again, under Fail",
      outcome: {
        plan: {
          ...plan([cluster("east", { changed: [object] })]),
          unplaced: [short(0, 12)],
          unplacedPolicy: "Fail" as const,
        },
      },
      verdict: { ok: true, description: "1 cluster change" },
    },
    {
      name: "several workloads' unplaced replicas, under Fail",
      outcome: {
        plan: {
          ...plan([cluster("east", { changed: [object] })]),
          unplaced: [short(2), short(3)],
          unplacedPolicy: "Fail" as const,
        },
      },
      verdict: { ok: false, description: "5 replicas of 2 workloads fit nowhere" },
    },
  ])("says $name", ({ outcome, verdict }) => {
    expect(planVerdict(outcome)).toEqual(verdict);
  });

  it("fences a report so nothing in it closes the block", () => {
    const text = formatInvalidHeadMarkdown("0123456789abcdef", "a ```` run\n");
    expect(text).toContain("**0123456789ab is invalid**");
    expect(text).toContain("`````\na ```` run\n`````");
  });
});

describe("a decision's shortfall", () => {
  const decision = (
    unschedulable: number,
    room: Record<string, { holds: number; by: string }> | undefined,
  ) => ({
    clusters: {},
    unschedulable,
    diagnosis: {
      summary: "3/3 clusters available",
      filtered: {},
      frozen: {},
      notSelected: {},
      selected: [],
      ...(room ? { room } : {}),
      ...(unschedulable > 0
        ? { unschedulableReason: "0/3 clusters available: 3 not ready; no cluster is available" }
        : {}),
    },
  });
  const cpu = {
    a: { holds: 8, by: "cpu" },
    b: { holds: 20, by: "maxReplicas" },
    c: { holds: 16, by: "cpu" },
  };

  it.each([
    ["every replica placed", 60, decision(0, cpu), undefined],
    [
      "one replica short",
      60,
      decision(1, cpu),
      "1 of 60 replicas of W fit nowhere: the selected clusters fit 59 (cpu, maxReplicas)",
    ],
    [
      "every replica short",
      60,
      decision(60, {}),
      "60 of 60 replicas of W fit nowhere: 0/3 clusters available: 3 not ready; no cluster is available",
    ],
    // A Duplicated workload's shortfall adds up over clusters.
    [
      "more short than its count",
      4,
      decision(6, undefined),
      "6 replicas of W fit nowhere: 0/3 clusters available: 3 not ready; no cluster is available",
    ],
  ])("%s", (_case, replicas, given, line) => {
    const shortfall = shortfallOf(replicas, given);
    expect(shortfall && describeShortfall("W", shortfall)).toBe(line);
  });
});
