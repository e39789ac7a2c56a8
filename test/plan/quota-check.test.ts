import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { FileTree } from "../../src/model/file-tree.js";
import { formatProblem } from "../../src/model/problem.js";
import { type QuotaRevision, quotaProblems } from "../../src/plan/quota-check.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import { EMPTY_STATE, reconcileStep } from "../../src/reconcile/reconcile-step.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { quotaFile } from "../helpers/fleet-quota.js";
import { minimalFleetWith, webDeployment, webFederatedHpa } from "../helpers/minimal-fleet.js";

// Before merge, a change that grows a namespace past its quota's overall limits is an error at the
// file that grows it, with the arithmetic; the reconcile refuses such a commit as it refuses an
// invalid one.

const apiDeployment = (replicas: number, cpu: string) =>
  webDeployment(replicas, cpu).replaceAll("web", "api");

function revision(tree: FileTree): QuotaRevision {
  const loaded = loadFleet(tree);
  if (!loaded.model) throw new Error(loaded.problems.map(formatProblem).join("\n"));
  return { model: loaded.model, render: renderFleet(loaded.model) };
}

const tree = (web: number, api: number, overall = '"8"', more: Record<string, string> = {}) =>
  minimalFleetWith({
    "apps/web/deployment.yaml": webDeployment(web, "1"),
    "apps/web/api.yaml": apiDeployment(api, "500m"),
    "quotas/shop.yaml": quotaFile(`requests.cpu: ${overall}`),
    ...more,
  });

const check = (base: FileTree | undefined, head: FileTree) =>
  quotaProblems(base && revision(base), revision(head), head).map(formatProblem);

describe("the overall limits before merge", () => {
  // web asks 1 CPU a replica, api 500m: web 6 + api 4 = 8 CPUs, the limit.
  it.each([
    [6, 4, []],
    [5, 6, []],
    [7, 4, ["apps/web/deployment.yaml:8:13"]],
    [6, 5, ["apps/web/api.yaml:8:13"]],
  ])("web %i and api %i: errors at %o", (web, api, where) => {
    const problems = check(tree(6, 4), tree(web, api));
    expect(problems.map((p) => p.split(": ")[0])).toEqual(where);
  });

  it("says the arithmetic at the workload whose change grew the usage", () => {
    expect(check(tree(6, 4), tree(7, 4))).toEqual([
      "apps/web/deployment.yaml:8:13: error: /spec/replicas: namespace shop would use requests.cpu 9 across the fleet, over FederatedResourceQuota shop (quotas/shop.yaml)'s overall 8: Deployment shop/web 7 (7 × 1), Deployment shop/api 2 (4 × 500m); Deployment shop/web grows it to 7 [QUOTA_EXCEEDED]",
    ]);
  });

  it("is said at the quota when its limit is what fell", () => {
    const problems = check(tree(6, 4), tree(6, 4, '"7500m"'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^quotas\/shop\.yaml:7:\d+: error: \/spec\/overall\/requests\.cpu: namespace shop would use requests\.cpu 8 across the fleet, over .*'s overall 7500m/,
    );
  });

  it("without a base, is said at every workload that counts", () => {
    expect(check(undefined, tree(7, 4)).map((p) => p.split(": ")[0])).toEqual([
      "apps/web/api.yaml:8:13",
      "apps/web/deployment.yaml:8:13",
    ]);
  });

  it("counts a Duplicated workload once per cluster", () => {
    const duplicated = {
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  replicaScheduling:\n    type: Duplicated\n",
    };
    // Two clusters: web 4 × 2 + api 0 = 8 fits; web 4 × 2 + api 1 × 2 = 9 does not.
    expect(check(undefined, tree(4, 0, '"8"', duplicated))).toEqual([]);
    expect(check(tree(4, 0, '"8"', duplicated), tree(4, 1, '"8"', duplicated))[0]).toContain(
      "Deployment shop/web 8 (8 × 1), Deployment shop/api 1 (2 × 500m)",
    );
  });

  it("counts an autoscaled workload at its FederatedHPA's minReplicas", () => {
    const hpa = (min: number) => ({ "autoscaling/web.yaml": webFederatedHpa({ min, max: 50, cpu: 60 }) });
    expect(check(undefined, tree(40, 4, '"8"', hpa(6)))).toEqual([]);
    expect(check(tree(40, 4, '"8"', hpa(6)), tree(40, 4, '"8"', hpa(7)))[0]).toContain(
      "Deployment shop/web 7 (7 × 1)",
    );
  });

  it("makes the reconcile refuse the commit and keep what runs", () => {
    const first = reconcileStep(EMPTY_STATE, {
      sourceCommit: "a".repeat(40),
      tree: tree(6, 4),
      changedPaths: ALL,
    });
    expect(first.valid).toBe(true);
    const second = reconcileStep(first.state, {
      sourceCommit: "b".repeat(40),
      tree: tree(9, 4),
      changedPaths: ["apps/web/deployment.yaml"],
    });
    expect(second.valid).toBe(false);
    expect(second.problems.map((p) => p.code)).toContain("QUOTA_EXCEEDED");
    expect(second.state.render).toBe(first.state.render);
  });
});
