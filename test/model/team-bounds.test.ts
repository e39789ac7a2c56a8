import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

// A Team's files stay within its bounds: namespaces, kinds, clusters, and selections of its own
// apps — each refused at the line that leaves them.

const team = (more = "", paths = "[apps/web/**, placements/web.yaml]") => `apiVersion: gitfleet.io/v1alpha1
kind: Team
metadata:
  name: shop
spec:
  paths: ${paths}
  owners: ["@example/shop"]
  namespaces: [shop, shop-*]
${more}`;

const problems = (files: Record<string, string | null>) =>
  loadFleet(minimalFleetWith({ "teams/shop.yaml": team(), ...files })).problems.map(formatProblem);

const BINDING = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: shop-admin
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: Group, name: shop, apiGroup: rbac.authorization.k8s.io}]
`;

describe("team bounds", () => {
  it("accepts the minimal fleet's web under a team that owns it", () => {
    expect(problems({})).toEqual([]);
  });

  it.each([
    [
      "a cluster-scoped kind the team may not hold",
      { "apps/web/binding.yaml": BINDING },
      "apps/web/binding.yaml:2:7: error: /kind: team shop may not hold the cluster-scoped ClusterRoleBinding (rbac.authorization.k8s.io): the platform team's files may, or list it in teams/shop.yaml spec.clusterScopedKinds [OUTSIDE_TEAM_BOUNDS]",
    ],
    [
      "an object in another namespace",
      {
        "apps/web/config.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: payments\ndata: {a: b}\n",
      },
      "apps/web/config.yaml:5:14: error: /metadata/namespace: namespace payments is outside team shop's namespaces (shop, shop-*; teams/shop.yaml) [OUTSIDE_TEAM_BOUNDS]",
    ],
    [
      "a Namespace it may create but outside its patterns",
      {
        "teams/shop.yaml": team("  clusterScopedKinds: [Namespace]\n"),
        "apps/web/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: billing\n",
      },
      "apps/web/ns.yaml:4:9: error: /metadata/name: namespace billing is outside team shop's namespaces (shop, shop-*; teams/shop.yaml) [OUTSIDE_TEAM_BOUNDS]",
    ],
    [
      "a namespaced kind not in its list",
      { "teams/shop.yaml": team("  namespacedKinds: [apps/Deployment, Service]\n") },
      "apps/web/config.yaml:2:7: error: /kind: team shop may not hold ConfigMap: teams/shop.yaml spec.namespacedKinds allows apps/Deployment, Service [OUTSIDE_TEAM_BOUNDS]",
    ],
    [
      "a Placement that selects another team's app",
      {
        "placements/web.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web, api]\n",
        "apps/api/api.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\n  namespace: shop\n",
      },
      "placements/web.yaml:6:15: error: /spec/apps/1: app api is not team shop's (apps/api/api.yaml); a team's Placement selects only its own apps unless teams/shop.yaml sets selectOutside [OUTSIDE_TEAM_BOUNDS]",
    ],
    [
      "a Placement that can select clusters outside the team's",
      { "teams/shop.yaml": team("  clusters:\n    clusterNames: [east]\n") },
      "placements/web.yaml:6:3: error: /spec: Placement web can select west, outside team shop's clusters (teams/shop.yaml spec.clusters); narrow its clusterAffinity [OUTSIDE_TEAM_BOUNDS]",
    ],
    [
      "paths that reach a platform file",
      { "teams/shop.yaml": team("", "[apps/web/**, teams/*.yaml]") },
      "teams/shop.yaml:6:24: error: /spec/paths/1: it matches teams/shop.yaml, a platform file (fleet.yaml, clusters/, teams/ and quotas/ are the platform team's) [OUTSIDE_TEAM_BOUNDS]",
    ],
    [
      "a file two teams own",
      { "teams/web.yaml": team("", "[apps/*/deployment.yaml]").replace("name: shop", "name: web") },
      "teams/web.yaml:6:11: error: /spec/paths/0: apps/web/deployment.yaml is also team shop's (teams/shop.yaml); a file has one owning team [INVALID_FIELD_COMBINATION]",
    ],
  ])("refuses %s", (_case, files, expected) => {
    expect(problems(files)).toContain(expected);
  });

  it("lets selectOutside select other apps, and leaves platform files unbounded", () => {
    const files = {
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web, api]\n",
      "apps/api/api.yaml": BINDING,
    };
    expect(problems({ ...files, "teams/shop.yaml": team("  selectOutside: true\n") })).toEqual([]);
  });

  it("renders no object of a valid team outside its namespaces and clusters (property)", () => {
    const names = fc.constantFrom("shop", "shop-eu", "payments", "games");
    const clusters = fc.subarray(["east", "west"], { minLength: 1 });
    fc.assert(
      fc.property(
        fc.array(names, { minLength: 1, maxLength: 4 }),
        clusters,
        clusters,
        (spaces, placed, allowed) => {
          const files: Record<string, string> = {
            "teams/shop.yaml": team(`  clusters:\n    clusterNames: [${allowed.join(", ")}]\n`),
            "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  clusterAffinity:\n    clusterNames: [${placed.join(", ")}]\n`,
          };
          spaces.forEach((namespace, i) => {
            files[`apps/web/extra-${i}.yaml`] =
              `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra-${i}\n  namespace: ${namespace}\ndata: {a: b}\n`;
          });
          const loaded = loadFleet(minimalFleetWith(files));
          const within =
            spaces.every((n) => n === "shop" || n.startsWith("shop-")) &&
            placed.every((c) => allowed.includes(c));
          expect(loaded.model !== undefined).toBe(within);
          if (!loaded.model) return;
          for (const object of renderFleet(loaded.model).objects.filter((o) => o.app === "web")) {
            expect(allowed).toContain(object.cluster);
            expect(String((object.object.metadata as { namespace?: string }).namespace)).toMatch(
              /^shop(-.*)?$/,
            );
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
