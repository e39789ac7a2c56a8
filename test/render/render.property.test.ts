import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { formatRenderedTree } from "../../src/render/format-render.js";
import { renderFleet } from "../../src/render/render-fleet.js";

/** Rendering properties over random small fleets; fast-check prints the seed on failure. */

const REGIONS = ["east", "west"];

const fleetArb = fc.record({
  clusters: fc.integer({ min: 1, max: 6 }),
  regions: fc.array(fc.constantFrom(...REGIONS), { minLength: 6, maxLength: 6 }),
  replicas: fc.nat({ max: 40 }),
  uid: fc.uuid(),
  secret: fc.string({ minLength: 12, maxLength: 24 }).map((s) => `fake-${Buffer.from(s).toString("hex")}`),
  scheduling: fc.constantFrom(
    "",
    "  replicaScheduling:\n    type: Divided\n",
    "  replicaScheduling:\n    type: Divided\n    weightPreference:\n      staticWeightList:\n        - targetCluster: {fieldSelector: {matchExpressions: [{key: region, operator: In, values: [east]}]}}\n          weight: 3\n        - targetCluster: {}\n          weight: 1\n",
    "  replicaScheduling:\n    type: Divided\n    weightPreference:\n      dynamicWeight: AvailableReplicas\n",
  ),
});

function build(fleet: {
  clusters: number;
  regions: string[];
  replicas: number;
  uid: string;
  secret: string;
  scheduling: string;
}): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < fleet.clusters; i++) {
    out[`clusters/c${i}.yaml`] =
      `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: c${i}\nspec:\n  region: ${fleet.regions[i] ?? "east"}\n`;
  }
  out["apps/web/web.yaml"] = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  uid: ${fleet.uid}
spec:
  replicas: ${fleet.replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: web:1
          envFrom:
            - secretRef: {name: web-secret}
---
apiVersion: v1
kind: Secret
metadata:
  name: web-secret
stringData:
  token: ${fleet.secret}
`;
  out["placements/web.yaml"] =
    `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  resourceSelectors:\n    - apiVersion: apps/v1\n      kind: Deployment\n      name: web\n${fleet.scheduling}`;
  return out;
}

function render(text: Record<string, string>) {
  const loaded = loadFleet(fileTreeFromText(text));
  if (!loaded.model) throw new Error(loaded.problems.map((p) => p.message).join("; "));
  return renderFleet(loaded.model);
}

describe("rendering properties", () => {
  it("renders every assigned replica in exactly one cluster's workload, and the Secret where the workload runs", () => {
    fc.assert(
      fc.property(fleetArb, (fleet) => {
        const result = render(build(fleet));
        const [decision] = result.decisions;
        expect(decision).toBeDefined();
        const deployments = result.objects.filter((o) => o.object.kind === "Deployment");
        const rendered = Object.fromEntries(
          deployments.map((o) => [o.cluster, (o.object.spec as { replicas: number }).replicas]),
        );
        const divided = fleet.scheduling !== "";
        if (divided) expect(rendered).toEqual(decision?.decision.clusters);
        else for (const count of Object.values(rendered)) expect(count).toBe(fleet.replicas);
        expect(new Set(deployments.map((o) => o.path)).size).toBe(deployments.length);
        const secretClusters = result.objects.filter((o) => o.object.kind === "Secret").map((o) => o.cluster);
        expect(secretClusters).toEqual(deployments.map((o) => o.cluster));
      }),
      { numRuns: 150 },
    );
  });

  it("never writes a Secret value, and gives the same bytes for any file order", () => {
    fc.assert(
      fc.property(fleetArb, fc.array(fc.integer(), { minLength: 1, maxLength: 10 }), (fleet, keys) => {
        const text = build(fleet);
        const tree = formatRenderedTree(render(text));
        expect(tree).not.toContain(fleet.secret);
        const shuffled = Object.fromEntries(
          Object.entries(text)
            .map((e, i) => ({ e, k: keys[i % keys.length] ?? 0 }))
            .sort((a, b) => a.k - b.k)
            .map((x) => x.e),
        );
        expect(formatRenderedTree(render(shuffled))).toBe(tree);
      }),
      { numRuns: 100 },
    );
  });
});
