import { describe, expect, it } from "vitest";
import { matchesLabelSelector } from "../../src/apimachinery/label-selector.js";
import { clusterFacts, explainAffinityMismatch } from "../../src/model/cluster-affinity.js";
import { matchesResourceSelector } from "../../src/model/resource-selection.js";
import type { Cluster, ClusterAffinity, LabelSelector } from "../../src/model/types.js";
import { WEB_DEPLOYMENT } from "../helpers/resources.js";

const labels = { env: "prod", tier: "onprem" };

describe("label selectors", () => {
  it.each<[string, LabelSelector, boolean]>([
    ["empty matches everything", {}, true],
    ["matchLabels equal", { matchLabels: { env: "prod" } }, true],
    ["matchLabels different value", { matchLabels: { env: "test" } }, false],
    ["matchLabels missing key", { matchLabels: { zone: "a" } }, false],
    ["In", { matchExpressions: [{ key: "env", operator: "In", values: ["prod", "staging"] }] }, true],
    ["In without the value", { matchExpressions: [{ key: "env", operator: "In", values: ["test"] }] }, false],
    ["In on a missing key", { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }, false],
    ["NotIn", { matchExpressions: [{ key: "env", operator: "NotIn", values: ["test"] }] }, true],
    [
      "NotIn with the value",
      { matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }] },
      false,
    ],
    [
      "NotIn on a missing key matches",
      { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] },
      true,
    ],
    ["Exists", { matchExpressions: [{ key: "tier", operator: "Exists" }] }, true],
    ["Exists on a missing key", { matchExpressions: [{ key: "gpu", operator: "Exists" }] }, false],
    ["DoesNotExist", { matchExpressions: [{ key: "gpu", operator: "DoesNotExist" }] }, true],
    [
      "matchLabels and expressions are ANDed",
      { matchLabels: { env: "prod" }, matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] },
      false,
    ],
  ])("%s", (_name, selector, expected) => {
    expect(matchesLabelSelector(selector, labels)).toBe(expected);
  });
});

const cluster = (
  name: string,
  spec: Cluster["spec"],
  clusterLabels: Record<string, string> = {},
): Cluster => ({
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "Cluster",
  metadata: { name, labels: clusterLabels },
  spec,
  origin: { file: `clusters/${name}.yaml`, index: 0 },
});

describe("cluster affinity", () => {
  const east = clusterFacts(cluster("east", { provider: "aws", region: "us-east" }, { env: "prod" }));
  it.each<[string, ClusterAffinity, string | undefined]>([
    ["empty affinity means every cluster", {}, undefined],
    ["listed by name", { clusterNames: ["east", "west"] }, undefined],
    ["not listed by name", { clusterNames: ["west"] }, "not in clusterNames"],
    ["excluded", { exclude: ["east"] }, "excluded by name"],
    ["listed but excluded", { clusterNames: ["east"], exclude: ["east"] }, "excluded by name"],
    ["label selector", { labelSelector: { matchLabels: { env: "prod" } } }, undefined],
    [
      "label selector mismatch",
      { labelSelector: { matchLabels: { env: "test" } } },
      "labels do not match env=test",
    ],
    [
      "expression mismatch",
      {
        labelSelector: {
          matchExpressions: [
            { key: "gpu", operator: "Exists" },
            { key: "env", operator: "In", values: ["a", "b"] },
          ],
        },
      },
      "labels do not match gpu,env in (a,b)",
    ],
    [
      "field In",
      { fieldSelector: { matchExpressions: [{ key: "provider", operator: "In", values: ["aws", "gcp"] }] } },
      undefined,
    ],
    [
      "field In mismatch",
      { fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["eu-west"] }] } },
      "not in region [eu-west]",
    ],
    [
      "field NotIn",
      { fieldSelector: { matchExpressions: [{ key: "region", operator: "NotIn", values: ["us-east"] }] } },
      "in excluded region [us-east]",
    ],
    [
      "field In on an unset zone",
      { fieldSelector: { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] } },
      "not in zone [a]",
    ],
  ])("%s", (_name, affinity, reason) => {
    expect(explainAffinityMismatch(affinity, east)).toBe(reason);
  });
});

describe("resource selectors", () => {
  const web = WEB_DEPLOYMENT;
  it.each([
    ["kind and apiVersion", { apiVersion: "apps/v1", kind: "Deployment" }, true],
    ["other apiVersion", { apiVersion: "apps/v1beta1", kind: "Deployment" }, false],
    ["other kind", { apiVersion: "apps/v1", kind: "StatefulSet" }, false],
    ["namespace", { apiVersion: "apps/v1", kind: "Deployment", namespace: "shop" }, true],
    ["other namespace", { apiVersion: "apps/v1", kind: "Deployment", namespace: "data" }, false],
    ["name", { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, true],
    [
      "name makes labels irrelevant",
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: "web",
        labelSelector: { matchLabels: { tier: "back" } },
      },
      true,
    ],
    [
      "labels",
      { apiVersion: "apps/v1", kind: "Deployment", labelSelector: { matchLabels: { tier: "back" } } },
      false,
    ],
  ])("%s", (_name, selector, expected) => {
    expect(matchesResourceSelector(selector, web)).toBe(expected);
  });
});
