import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { FleetModel } from "../../src/model/types.js";
import { formatPlanText } from "../../src/plan/format-plan.js";
import { planChange } from "../../src/plan/plan.js";
import { replicasUnderAutoscalers } from "../../src/plan/replicas-under-autoscalers.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import { EMPTY_STATE, reconcileStep } from "../../src/reconcile/reconcile-step.js";
import { minimalFleetWith, webDeployment } from "../helpers/minimal-fleet.js";

// A pull request that changes `replicas` of a workload an autoscaler owns is told so, at the line
// it changed, naming the autoscaler: the change would do nothing.

const HPA = `apiVersion: gitfleet.io/v1alpha1
kind: FederatedHPA
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
`;

const tree = (replicas: number, autoscaler: Record<string, string> = { "autoscaling/web.yaml": HPA }) =>
  minimalFleetWith({ "apps/web/deployment.yaml": webDeployment(replicas), ...autoscaler });

function model(t: ReturnType<typeof tree>): FleetModel {
  const loaded = loadFleet(t);
  if (!loaded.model) throw new Error(loaded.problems.map((p) => p.message).join("\n"));
  return loaded.model;
}

describe("a replicas change under an autoscaler", () => {
  it.each([
    ["a FederatedHPA", { "autoscaling/web.yaml": HPA }, "FederatedHPA web (autoscaling/web.yaml)"],
    [
      "a CronScale",
      {
        "autoscaling/peak.yaml":
          'apiVersion: gitfleet.io/v1alpha1\nkind: CronScale\nmetadata:\n  name: peak\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  rules:\n    - {name: up, schedule: "0 8 * * *", targetReplicas: 9}\n',
      },
      "CronScale peak (autoscaling/peak.yaml)",
    ],
  ])("is a warning at the replicas line naming %s", (_what, autoscaler, owner) => {
    const head = tree(7, autoscaler);
    const [warning, ...rest] = replicasUnderAutoscalers(model(tree(4, autoscaler)), model(head), head);
    expect(rest).toEqual([]);
    const line = new TextDecoder()
      .decode(head.get("apps/web/deployment.yaml"))
      .split("\n")
      .findIndex((l) => l.includes("replicas: 7"));
    expect(warning).toMatchObject({
      file: "apps/web/deployment.yaml",
      line: line + 1,
      severity: "warning",
      code: "REPLICAS_UNDER_AUTOSCALER",
    });
    expect(warning?.message).toContain(`replicas 4 → 7 changes nothing: ${owner} owns this workload's count`);
  });

  it("says nothing without an autoscaler, or when replicas did not change", () => {
    expect(replicasUnderAutoscalers(model(tree(4, {})), model(tree(7, {})), tree(7, {}))).toEqual([]);
    expect(replicasUnderAutoscalers(model(tree(4)), model(tree(4)), tree(4))).toEqual([]);
  });

  it("is recorded in status/source.yaml by the reconcile, and printed by the plan", () => {
    const first = reconcileStep(EMPTY_STATE, {
      sourceCommit: "a".repeat(40),
      tree: tree(4),
      changedPaths: ALL,
    });
    const second = reconcileStep(first.state, {
      sourceCommit: "b".repeat(40),
      tree: tree(7),
      changedPaths: ["apps/web/deployment.yaml"],
    });
    expect(second.valid).toBe(true);
    expect(second.problems.map((p) => p.code)).toEqual(["REPLICAS_UNDER_AUTOSCALER"]);
    expect(second.changes.get("status/source.yaml")).toContain("warnings: 1");
    const plan = planChange(first.state.render, second.state.render);
    const text = formatPlanText({ ...plan, changed: true, warnings: second.problems });
    expect(text).toMatch(
      /Warnings:\n {2}apps\/web\/deployment\.yaml:\d+:\d+: replicas 4 → 7 changes nothing/,
    );
  });
});
