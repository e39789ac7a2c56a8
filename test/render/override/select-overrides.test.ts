import { describe, expect, it } from "vitest";
import type { ClusterFacts } from "../../../src/model/cluster-affinity.js";
import type { Override } from "../../../src/model/types.js";
import { applicableRules } from "../../../src/render/override/select-overrides.js";
import { WEB_DEPLOYMENT } from "../../helpers/resources.js";

const web = WEB_DEPLOYMENT;
const east: ClusterFacts = {
  name: "east",
  labels: { env: "prod" },
  provider: "aws",
  region: "us-east",
  zone: "",
};

const override = (name: string, spec: Partial<Override["spec"]>, rules = 1): Override => ({
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "Override",
  metadata: { name },
  spec: {
    overrideRules: Array.from({ length: rules }, (_, i) => ({
      overriders: { labelsOverrider: [{ operator: "add", value: { [name]: String(i) } }] },
    })),
    ...spec,
  },
  origin: { file: `overrides/${name}.yaml`, index: 0 },
});

describe("which Override rules apply, and in what order", () => {
  it("orders by specificity (all < app or kind < labels < name), then by name, rules in file order", () => {
    const overrides = [
      override("by-name", {
        resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web" }],
      }),
      override("by-labels", {
        resourceSelectors: [
          { apiVersion: "apps/v1", kind: "Deployment", labelSelector: { matchLabels: { tier: "front" } } },
        ],
      }),
      override("b-everything", {}, 2),
      override("a-everything", {}),
      override("by-app", { apps: ["web"] }),
      override("by-kind", { resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment" }] }),
      override("other-app", { apps: ["api"] }),
      override("other-name", {
        resourceSelectors: [{ apiVersion: "apps/v1", kind: "Deployment", name: "api" }],
      }),
    ];
    const order = applicableRules(web, east, overrides).map(
      (r) => `${r.override.metadata.name}#${r.ruleIndex}`,
    );
    expect(order).toEqual([
      "a-everything#0",
      "b-everything#0",
      "b-everything#1",
      "by-app#0",
      "by-kind#0",
      "by-labels#0",
      "by-name#0",
    ]);
  });

  it("applies a rule only where its targetCluster selects the cluster", () => {
    const regional: Override = {
      ...override("regional", {}),
      spec: {
        overrideRules: [
          {
            targetCluster: {
              fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["eu-west"] }] },
            },
            overriders: { labelsOverrider: [{ operator: "add", value: { region: "eu" } }] },
          },
          {
            targetCluster: {
              fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["us-east"] }] },
            },
            overriders: { labelsOverrider: [{ operator: "add", value: { region: "us" } }] },
          },
          { overriders: { labelsOverrider: [{ operator: "add", value: { everywhere: "yes" } }] } },
        ],
      },
    };
    expect(applicableRules(web, east, [regional]).map((r) => r.ruleIndex)).toEqual([1, 2]);
  });
});
