import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterPlan, ObjectChange, Plan, WorkloadNote } from "../../src/plan/plan.js";
import { planForApps } from "../../src/plan/plan-for-apps.js";

// A plan cut to the apps a team's member may see: nothing of another app is left, nothing of a seen
// app is lost, and what belongs to the fleet as a whole is gone.

const APPS = ["web", "docs", "games"] as const;
const app = fc.constantFrom(...APPS);
const change: fc.Arbitrary<ObjectChange> = fc.record({
  path: fc.stringMatching(/^rendered\/[a-z]{1,5}\/[a-z]{1,5}\.yaml$/),
  app,
  object: fc.constant("ConfigMap shop/x"),
  secret: fc.boolean(),
});
const note: fc.Arbitrary<WorkloadNote> = fc.record({
  app,
  workload: fc.constant("Deployment shop/x"),
  reason: fc.constant("why"),
});
const cluster: fc.Arbitrary<ClusterPlan> = fc.record(
  {
    cluster: fc.constantFrom("east", "west", "north"),
    added: fc.array(change, { maxLength: 4 }),
    changed: fc.array(change, { maxLength: 4 }),
    removed: fc.array(change, { maxLength: 4 }),
    filteredOut: fc.array(note, { maxLength: 2 }),
    frozen: fc.array(note, { maxLength: 2 }),
    pruneBlocked: fc.constant({ token: "prune-1", reasons: ["too many"] }),
  },
  { requiredKeys: ["cluster", "added", "changed", "removed", "filteredOut", "frozen"] },
);
const plan: fc.Arbitrary<Plan> = fc.record({
  clusters: fc.array(cluster, { maxLength: 4 }),
  distributions: fc.array(
    fc.record({
      app,
      workload: fc.constant("Deployment shop/x"),
      before: fc.constant({ east: 1 }),
      after: fc.constant({ east: 2 }),
    }),
    { maxLength: 3 },
  ),
  controlPlanes: fc.constant([]),
  services: fc.constant(["web: exported to east"]),
  timing: fc.constant(["docs: waits for its sync window"]),
  upgrades: fc.constant(["cve/canary: WaitingApproval → Syncing"]),
  hookConflicts: fc.array(
    fc.record({
      cluster: fc.constant("east"),
      object: fc.constant("Job x"),
      app,
      hook: fc.constant("PreSync"),
    }),
    { maxLength: 2 },
  ),
  changed: fc.constant(true),
});
const seen = fc.subarray<string>([...APPS]);

const appsIn = (p: Plan) => [
  ...p.clusters.flatMap((c) =>
    [...c.added, ...c.changed, ...c.removed, ...c.filteredOut, ...c.frozen].map((x) => x.app),
  ),
  ...p.distributions.map((d) => d.app),
  ...(p.hookConflicts ?? []).map((h) => h.app),
];
const count = (p: Plan, apps: readonly string[]) => appsIn(p).filter((a) => apps.includes(a)).length;

describe("a plan cut to a team's apps", () => {
  it("keeps every change of the seen apps and none of the others", () => {
    fc.assert(
      fc.property(plan, seen, (original, apps) => {
        const cut = planForApps(original, (a) => apps.includes(a));
        expect(appsIn(cut).every((a) => apps.includes(a))).toBe(true);
        expect(count(cut, apps)).toBe(count(original, apps));
        expect(cut.changed).toBe(cut.clusters.length > 0 || cut.distributions.length > 0);
        expect(
          cut.clusters.every(
            (c) =>
              c.added.length + c.changed.length + c.removed.length + c.filteredOut.length + c.frozen.length >
              0,
          ),
        ).toBe(true);
      }),
    );
  });

  it("leaves out what belongs to the fleet as a whole, and a prune verdict over removals it does not see", () => {
    const docs: ObjectChange = {
      path: "rendered/east/docs.yaml",
      app: "docs",
      object: "ConfigMap docs/docs",
      secret: false,
    };
    const web: ObjectChange = { ...docs, path: "rendered/east/web.yaml", app: "web" };
    const original: Plan = {
      clusters: [
        {
          cluster: "east",
          added: [web],
          changed: [],
          removed: [docs],
          filteredOut: [],
          frozen: [],
          pruneBlocked: { token: "prune-1", reasons: ["too many"] },
        },
        {
          cluster: "west",
          added: [],
          changed: [],
          removed: [web],
          filteredOut: [],
          frozen: [],
          pruneAllowedBy: "prune-2",
        },
      ],
      distributions: [],
      services: ["docs: exported"],
      timing: ["docs: waits"],
      upgrades: ["cve/canary"],
      warnings: [],
      changed: true,
    };
    const cut = planForApps(original, (a) => a === "web");
    expect(cut).toEqual({
      clusters: [
        { cluster: "east", added: [web], changed: [], removed: [], filteredOut: [], frozen: [] },
        {
          cluster: "west",
          added: [],
          changed: [],
          removed: [web],
          filteredOut: [],
          frozen: [],
          pruneAllowedBy: "prune-2",
        },
      ],
      distributions: [],
      changed: true,
    });
    expect(planForApps(original, () => false)).toEqual({ clusters: [], distributions: [], changed: false });
  });
});
