import { describe, expect, it } from "vitest";
import type { ClusterPlan, Plan } from "../../src/plan/plan.js";
import { formatInvalidHeadMarkdown, planVerdict } from "../../src/plan/plan-verdict.js";

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
  ])("says $name", ({ outcome, verdict }) => {
    expect(planVerdict(outcome)).toEqual(verdict);
  });

  it("fences a report so nothing in it closes the block", () => {
    const text = formatInvalidHeadMarkdown("0123456789abcdef", "a ```` run\n");
    expect(text).toContain("**0123456789ab is invalid**");
    expect(text).toContain("`````\na ```` run\n`````");
  });
});
