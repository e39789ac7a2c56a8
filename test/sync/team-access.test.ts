import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import type { FleetModel } from "../../src/model/types.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { desiredByCluster } from "../../src/sync/desired-objects.js";
import { teamAccessObjects } from "../../src/sync/team-access.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * The member-side half of a team's bounds: who each object is applied as, and the RBAC each team's
 * account gets in a member, derived from the Team alone (the real API server's refusals are in
 * test/e2e/real-clusters.e2e.ts).
 */

const TEAM = (spec: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Team\nmetadata:\n  name: web-team\nspec:\n  paths: [apps/web/**]\n  owners: ["@shop/web"]\n  namespaces: [shop]\n${spec}`;

function modelOf(files: Record<string, string>): FleetModel {
  const result = loadFleet(minimalFleetWith(files));
  if (!result.model) throw new Error(result.problems.map(formatProblem).join("\n"));
  return result.model;
}

function desiredIn(model: FleetModel, cluster = "east") {
  return desiredByCluster(renderFleet(model, {}).objects, model).get(cluster) ?? [];
}

function access(spec: string) {
  const model = modelOf({ "teams/web-team.yaml": TEAM(spec) });
  return teamAccessObjects(model, desiredIn(model));
}

const byKind = (objects: readonly JsonMap[], kind: string) => objects.filter((o) => o.kind === kind);

describe("who a team's objects are applied as", () => {
  it("names the team's account for each object of its files, and the controller for the platform's", () => {
    const model = modelOf({
      "teams/web-team.yaml": TEAM(""),
      "apps/ops/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: ops\nspec:\n  namespace: ops\n",
      "apps/ops/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ops\ndata: {a: b}\n",
      "placements/ops.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: ops\nspec:\n  apps: [ops]\n",
    });
    const users = Object.fromEntries(desiredIn(model).map((d) => [d.identity, d.team]));
    expect(users).toEqual({
      "apps/Deployment/shop/web": "web-team",
      "/ConfigMap/shop/web-config": "web-team",
      "/ConfigMap/ops/ops": undefined,
    });
  });

  it("applies everything as the controller in a fleet without teams", () => {
    expect(desiredIn(modelOf({})).every((d) => d.team === undefined)).toBe(true);
  });
});

describe("a team's RBAC in a member", () => {
  it("by default: its account, and every namespaced kind in exactly the namespaces its objects use there", () => {
    const objects = access("");
    expect(
      objects.map((o) => `${o.kind} ${asMap(o.metadata).namespace ?? "-"}/${asMap(o.metadata).name}`),
    ).toEqual([
      "ServiceAccount gitfleet-system/gitfleet-team-web-team",
      "ClusterRole -/gitfleet-team-web-team",
      "RoleBinding shop/gitfleet-team-web-team",
    ]);
    expect(byKind(objects, "ClusterRole")[0]?.rules).toEqual([
      { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
    ]);
    expect(byKind(objects, "RoleBinding")[0]).toMatchObject({
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "gitfleet-team-web-team" },
      subjects: [{ kind: "ServiceAccount", name: "gitfleet-team-web-team", namespace: "gitfleet-system" }],
    });
    expect(byKind(objects, "ClusterRoleBinding")).toEqual([]);
  });

  it.each([
    ["Deployment", { apiGroups: ["*"], resources: ["deployments"] }],
    ["apps/Deployment", { apiGroups: ["apps"], resources: ["deployments"] }],
    ["ConfigMap", { apiGroups: ["*"], resources: ["configmaps"] }],
    ["networking.k8s.io/Ingress", { apiGroups: ["networking.k8s.io"], resources: ["ingresses"] }],
    ["NetworkPolicy", { apiGroups: ["*"], resources: ["networkpolicies"] }],
    ["Endpoints", { apiGroups: ["*"], resources: ["endpoints"] }],
    [
      "autoscaling/HorizontalPodAutoscaler",
      { apiGroups: ["autoscaling"], resources: ["horizontalpodautoscalers"] },
    ],
    [
      "gateway.networking.k8s.io/Gateway",
      { apiGroups: ["gateway.networking.k8s.io"], resources: ["gateways"] },
    ],
  ])("grants the namespaced kind %s as its resource", (kind, rule) => {
    const objects = access(`  namespacedKinds: [apps/Deployment, ConfigMap, "${kind}"]\n`);
    expect(byKind(objects, "ClusterRole")[0]?.rules).toContainEqual({
      ...rule,
      verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
    });
  });

  it("binds listed cluster-scoped kinds cluster-wide in a role of their own, and none when it lists none", () => {
    const objects = access(
      "  clusterScopedKinds: [Namespace, apiextensions.k8s.io/CustomResourceDefinition]\n",
    );
    const cluster = byKind(objects, "ClusterRole").find(
      (o) => asMap(o.metadata).name === "gitfleet-team-web-team-cluster",
    );
    expect(cluster?.rules).toEqual([
      {
        apiGroups: ["*"],
        resources: ["namespaces"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
      {
        apiGroups: ["apiextensions.k8s.io"],
        resources: ["customresourcedefinitions"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
    ]);
    expect(byKind(objects, "ClusterRoleBinding")).toHaveLength(1);
    expect(byKind(access(""), "ClusterRoleBinding")).toEqual([]);
  });

  it("never binds a team outside the namespaces its objects use in that member (property)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom("games", "ops", "web"), { maxLength: 3 }), (more) => {
        // The minimal fleet's own objects are in shop.
        const namespaces = ["shop", ...more];
        const files: Record<string, string> = {
          "teams/web-team.yaml": TEAM("").replace(
            "namespaces: [shop]",
            `namespaces: [${namespaces.join(", ")}]`,
          ),
        };
        namespaces.forEach((namespace, i) => {
          files[`apps/web/extra-${i}.yaml`] =
            `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra-${i}\n  namespace: ${namespace}\ndata: {a: b}\n`;
        });
        const model = modelOf(files);
        const desired = desiredIn(model);
        const used = new Set(
          desired.filter((d) => d.team === "web-team").map((d) => asMap(d.object.metadata).namespace),
        );
        const bound = byKind(teamAccessObjects(model, desired), "RoleBinding").map(
          (o) => asMap(o.metadata).namespace,
        );
        expect(new Set(bound)).toEqual(used);
        for (const namespace of bound) expect(namespaces).toContain(namespace);
      }),
      { numRuns: 30 },
    );
  });
});
