import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { quotaFile } from "../helpers/fleet-quota.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

// A FederatedResourceQuota that cannot mean anything is refused at the field that is wrong.

const problems = (quota: string) =>
  loadFleet(minimalFleetWith({ "quotas/shop.yaml": quota })).problems.map(formatProblem);

describe("FederatedResourceQuota validation", () => {
  it.each([
    [
      "a static assignment to an unknown cluster",
      quotaFile('requests.cpu: "8"', { eats: 'requests.cpu: "2"' }),
      'quotas/shop.yaml:9:20: error: /spec/staticAssignments/0/clusterName: unknown cluster "eats" (did you mean "east"?) [UNKNOWN_REFERENCE]',
    ],
    [
      "a cluster assigned twice",
      `${quotaFile('requests.cpu: "8"', { east: 'requests.cpu: "2"' })}    - clusterName: east\n      hard: {requests.cpu: "1"}\n`,
      "quotas/shop.yaml:11:20: error: /spec/staticAssignments/1/clusterName: cluster east is assigned twice; give it one entry [DUPLICATE_MEMBER]",
    ],
    [
      "assignments that give more than the overall limit",
      quotaFile('requests.cpu: "3"', { east: 'requests.cpu: "2"', west: 'requests.cpu: "1001m"' }),
      "quotas/shop.yaml:7:27: error: /spec/overall/requests.cpu: the static assignments give requests.cpu 3001m in all, more than the overall 3; raise the overall limit or lower an assignment [INVALID_FIELD_COMBINATION]",
    ],
    [
      "an assignment of a resource not limited overall",
      quotaFile('requests.cpu: "3"', { east: "pods: 4" }),
      "quotas/shop.yaml:10:20: error: /spec/staticAssignments/0/hard/pods: pods is not limited overall: add it to spec.overall (the static assignments share the overall limits) [INVALID_FIELD_COMBINATION]",
    ],
    [
      "a negative limit",
      quotaFile('requests.memory: "-1Gi"'),
      'quotas/shop.yaml:7:30: error: /spec/overall/requests.memory: requests.memory: "-1Gi" is not a non-negative quantity [INVALID_QUANTITY]',
    ],
  ])("%s", (_case, quota, expected) => {
    expect(problems(quota)).toEqual([expected]);
  });

  it.each([
    ["a resource gitfleet cannot count", quotaFile('count/deployments.apps: "3"'), "/spec/overall"],
    ["a limit that is no quantity", quotaFile('requests.cpu: "lots"'), "/spec/overall/requests.cpu"],
    ["no namespace", quotaFile('pods: "3"').replace("  namespace: shop\n", ""), "/metadata"],
  ])("refuses %s by its schema", (_case, quota, path) => {
    const [first] = problems(quota);
    expect(first).toContain(`error: ${path}`);
    expect(first).toMatch(/\[(SCHEMA_VIOLATION|MISSING_FIELD)\]$/);
  });

  it("at the limit exactly, the assignments are valid", () => {
    expect(
      problems(quotaFile('requests.cpu: "3"', { east: 'requests.cpu: "2"', west: 'requests.cpu: "1"' })),
    ).toEqual([]);
  });
});
