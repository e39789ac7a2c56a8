import { describe, expect, it } from "vitest";
import type { PlacementSpec } from "../../src/model/types.js";
import type { FilterPlugin, FilterResult } from "../../src/schedule/framework.js";
import { APIEnablement } from "../../src/schedule/plugins/api-enablement.js";
import { ClusterAffinity } from "../../src/schedule/plugins/cluster-affinity.js";
import { ClusterReady } from "../../src/schedule/plugins/cluster-ready.js";
import { SpreadConstraint } from "../../src/schedule/plugins/spread-constraint.js";
import { TaintToleration } from "../../src/schedule/plugins/taint-toleration.js";
import { Unschedulable } from "../../src/schedule/plugins/unschedulable.js";
import type { ClusterState } from "../../src/schedule/types.js";
import { cluster, contextOf, problem } from "../helpers/scheduling.js";

interface FilterCase {
  readonly name: string;
  readonly plugin: FilterPlugin;
  readonly placement?: PlacementSpec;
  readonly cluster: ClusterState;
  readonly workload?: { apiVersion: string; kind: string };
  readonly expected: FilterResult;
}

const gpu = { key: "gpu", value: "true", effect: "NoSchedule" as const };
const down = { key: "gitfleet.io/not-ready", effect: "NoExecute" as const };
const ok: FilterResult = { status: "Success" };

const cases: FilterCase[] = [
  { name: "ClusterReady: ready", plugin: ClusterReady, cluster: cluster("a"), expected: ok },
  {
    name: "ClusterReady: not ready keeps existing",
    plugin: ClusterReady,
    cluster: cluster("a", { ready: false }),
    expected: { status: "Unschedulable", reason: "cluster not ready", keepsExisting: true },
  },
  { name: "Unschedulable: schedulable", plugin: Unschedulable, cluster: cluster("a"), expected: ok },
  {
    name: "Unschedulable: cordoned keeps existing",
    plugin: Unschedulable,
    cluster: cluster("a", { unschedulable: true }),
    expected: { status: "Unschedulable", reason: "cluster cordoned", keepsExisting: true },
  },
  { name: "TaintToleration: no taints", plugin: TaintToleration, cluster: cluster("a"), expected: ok },
  {
    name: "TaintToleration: tolerated by Equal",
    plugin: TaintToleration,
    placement: { tolerations: [{ key: "gpu", operator: "Equal", value: "true", effect: "NoSchedule" }] },
    cluster: cluster("a", { taints: [gpu] }),
    expected: ok,
  },
  {
    name: "TaintToleration: tolerated by Exists with empty key",
    plugin: TaintToleration,
    placement: { tolerations: [{ operator: "Exists" }] },
    cluster: cluster("a", { taints: [gpu, down] }),
    expected: ok,
  },
  {
    name: "TaintToleration: value mismatch",
    plugin: TaintToleration,
    placement: { tolerations: [{ key: "gpu", value: "false" }] },
    cluster: cluster("a", { taints: [gpu] }),
    expected: {
      status: "Unschedulable",
      reason: "untolerated taint {gpu=true:NoSchedule}",
      keepsExisting: true,
    },
  },
  {
    name: "TaintToleration: effect mismatch",
    plugin: TaintToleration,
    placement: { tolerations: [{ key: "gpu", operator: "Exists", effect: "NoExecute" }] },
    cluster: cluster("a", { taints: [gpu] }),
    expected: {
      status: "Unschedulable",
      reason: "untolerated taint {gpu=true:NoSchedule}",
      keepsExisting: true,
    },
  },
  {
    name: "TaintToleration: NoExecute removes existing replicas too",
    plugin: TaintToleration,
    cluster: cluster("a", { taints: [gpu, down] }),
    expected: {
      status: "Unschedulable",
      reason: "untolerated taint {gitfleet.io/not-ready:NoExecute}",
      keepsExisting: false,
    },
  },
  {
    name: "TaintToleration: unknown effect is an error",
    plugin: TaintToleration,
    cluster: cluster("a", { taints: [{ key: "x", effect: "Sometimes" as "NoSchedule" }] }),
    expected: { status: "Error", message: 'taint x has unknown effect "Sometimes"' },
  },
  { name: "ClusterAffinity: no affinity", plugin: ClusterAffinity, cluster: cluster("a"), expected: ok },
  {
    name: "ClusterAffinity: matches region",
    plugin: ClusterAffinity,
    placement: {
      clusterAffinity: {
        fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["east"] }] },
      },
    },
    cluster: cluster("a", { region: "east" }),
    expected: ok,
  },
  {
    name: "ClusterAffinity: not in region",
    plugin: ClusterAffinity,
    placement: {
      clusterAffinity: {
        fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["east"] }] },
      },
    },
    cluster: cluster("a", { region: "west" }),
    expected: { status: "Unschedulable", reason: "not in region [east]" },
  },
  {
    name: "ClusterAffinity: labels",
    plugin: ClusterAffinity,
    placement: { clusterAffinity: { labelSelector: { matchLabels: { env: "prod" } } } },
    cluster: cluster("a", { labels: { env: "dev" } }),
    expected: { status: "Unschedulable", reason: "labels do not match env=prod" },
  },
  {
    name: "ClusterAffinity: In without values is an error",
    plugin: ClusterAffinity,
    placement: {
      clusterAffinity: { fieldSelector: { matchExpressions: [{ key: "zone", operator: "In" }] } },
    },
    cluster: cluster("a"),
    expected: { status: "Error", message: "fieldSelector zone In needs values" },
  },
  {
    name: "APIEnablement: unknown APIs count as served",
    plugin: APIEnablement,
    cluster: cluster("a"),
    expected: ok,
  },
  {
    name: "APIEnablement: served",
    plugin: APIEnablement,
    cluster: cluster("a", { apiEnablements: ["apps/v1/Deployment"] }),
    expected: ok,
  },
  {
    name: "APIEnablement: not served",
    plugin: APIEnablement,
    workload: { apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet" },
    cluster: cluster("a", { apiEnablements: ["apps/v1/Deployment"] }),
    expected: { status: "Unschedulable", reason: "api apps.kruise.io/v1alpha1 CloneSet not served" },
  },
  {
    name: "SpreadConstraint: has the region",
    plugin: SpreadConstraint,
    placement: { spreadConstraints: [{ spreadByField: "region", minGroups: 2 }] },
    cluster: cluster("a", { region: "east" }),
    expected: ok,
  },
  {
    name: "SpreadConstraint: lacks the region",
    plugin: SpreadConstraint,
    placement: { spreadConstraints: [{ spreadByField: "region" }] },
    cluster: cluster("a"),
    expected: { status: "Unschedulable", reason: "no region to spread by" },
  },
  {
    name: "SpreadConstraint: lacks the label",
    plugin: SpreadConstraint,
    placement: { spreadConstraints: [{ spreadByLabel: "rack" }] },
    cluster: cluster("a", { labels: { env: "x" } }),
    expected: { status: "Unschedulable", reason: "no label rack to spread by" },
  },
  {
    name: "SpreadConstraint: both field and label is an error",
    plugin: SpreadConstraint,
    placement: { spreadConstraints: [{ spreadByField: "zone", spreadByLabel: "rack" }] },
    cluster: cluster("a"),
    expected: {
      status: "Error",
      message: "a spread constraint needs exactly one of spreadByField and spreadByLabel",
    },
  },
];

describe("filter plugins", () => {
  it.each(cases)("$name", ({ plugin, placement, cluster: state, workload, expected }) => {
    const p = problem(placement ?? {}, [state]);
    const withWorkload = workload ? { ...p, workload: { ...p.workload, ...workload } } : p;
    expect(plugin.filter(contextOf(withWorkload), state)).toEqual(expected);
  });

  it("ClusterReady and Unschedulable read two booleans and have no error case", () => {
    const plugins = [ClusterReady, Unschedulable];
    const states = [cluster("a"), cluster("b", { ready: false, unschedulable: true })];
    for (const plugin of plugins)
      for (const state of states)
        expect(plugin.filter(contextOf(problem({}, [state])), state).status).not.toBe("Error");
  });
});
