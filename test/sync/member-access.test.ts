import { describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import type { FleetModel } from "../../src/model/types.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { appliedKinds, memberAccessObjects } from "../../src/sync/member-access.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

// What `gitfleet join` grants gitfleet in a member: the kinds the fleet applies, what it reads, and
// the teams' needs only when there are teams (the real API server's enforcement: test/e2e/join.e2e.ts).

function modelOf(files: Record<string, string>): FleetModel {
  const result = loadFleet(minimalFleetWith(files));
  if (!result.model) throw new Error(result.problems.map(formatProblem).join("\n"));
  return result.model;
}

const TEAM = (kinds: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Team\nmetadata:\n  name: web-team\nspec:\n  paths: [apps/web/**]\n  owners: ["@shop/web"]\n  namespaces: [shop]\n${kinds}`;

const rulesOf = (objects: readonly JsonMap[], kind: string) =>
  asList(objects.find((o) => o.kind === kind)?.rules).map(asMap);
const granted = (rules: readonly JsonMap[], verb: string) =>
  rules
    .filter((r) => asList(r.verbs).includes(verb) || asList(r.verbs).includes("*"))
    .flatMap((r) =>
      asList(r.apiGroups).flatMap((g) => asList(r.resources).map((x) => `${String(g)}/${String(x)}`)),
    );

describe("memberAccessObjects", () => {
  it("writes exactly the kinds the fleet applies, reads what gitfleet observes, and grants no team rights without teams", () => {
    const model = modelOf({});
    const objects = memberAccessObjects(model, [
      { group: "apps", resource: "deployments" },
      { group: "", resource: "services" },
      { group: "apps", resource: "statefulsets" },
    ]);
    expect(objects.map((o) => `${String(o.kind)} ${String(asMap(o.metadata).name)}`)).toEqual([
      "Namespace gitfleet-system",
      "ServiceAccount gitfleet",
      "ClusterRole gitfleet-member",
      "ClusterRoleBinding gitfleet-member",
      "Role gitfleet-member",
      "RoleBinding gitfleet-member",
    ]);
    const cluster = rulesOf(objects, "ClusterRole");
    expect(granted(cluster, "delete")).toEqual(["/services", "apps/deployments", "apps/statefulsets"]);
    expect(granted(cluster, "list")).toEqual(
      expect.arrayContaining(["/nodes", "/pods", "/resourcequotas", "autoscaling/horizontalpodautoscalers"]),
    );
    expect(granted(cluster, "create")).not.toContain("rbac.authorization.k8s.io/clusterroles");
    expect(JSON.stringify(cluster)).not.toMatch(/secrets|impersonate|"\*"\]?,"verbs":\["\*"/);
    expect(granted(rulesOf(objects, "Role"), "impersonate")).toEqual([]);
    expect(granted(rulesOf(objects, "Role"), "update")).toEqual(["/configmaps"]);
  });

  it.each([
    [
      "a team's listed kinds",
      "  namespacedKinds: [ConfigMap, apps/Deployment]\n",
      ["*/configmaps", "apps/deployments"],
    ],
    ["a team allowed every namespaced kind", "", ["*/*"]],
  ])("holds what it must grant %s, and may impersonate the teams' accounts", (_name, kinds, expected) => {
    const objects = memberAccessObjects(modelOf({ "teams/web-team.yaml": TEAM(kinds) }), []);
    const cluster = rulesOf(objects, "ClusterRole");
    expect(granted(cluster, "delete")).toEqual(
      expect.arrayContaining([
        "rbac.authorization.k8s.io/clusterroles",
        "rbac.authorization.k8s.io/rolebindings",
        ...expected,
      ]),
    );
    expect(granted(rulesOf(objects, "Role"), "impersonate")).toEqual(["/serviceaccounts"]);
  });
});

describe("appliedKinds", () => {
  it("lists each kind the fleet's templates and renders hold once, sorted", () => {
    const model = modelOf({
      "apps/web/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
      "apps/web/config-b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
    });
    const kinds = appliedKinds(model, renderFleet(model).objects).map((k) => `${k.apiVersion} ${k.kind}`);
    expect(kinds).toEqual([...new Set(kinds)].sort());
    expect(kinds).toEqual(expect.arrayContaining(["apps/v1 Deployment", "v1 ConfigMap"]));
  });
});
