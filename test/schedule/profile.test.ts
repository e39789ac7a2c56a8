import { describe, expect, it } from "vitest";
import { DEFAULT_PLUGINS } from "../../src/model/scheduler-plugins.js";
import { buildProfile, DEFAULT_PROFILE, registeredPluginNames } from "../../src/schedule/profile.js";

const names = (plugins: readonly { name: string }[]) => plugins.map((p) => p.name);

describe("scheduler profiles", () => {
  it("the default profile runs every built-in plugin in the documented order", () => {
    expect(names(DEFAULT_PROFILE.filter)).toEqual([
      "ClusterReady",
      "Unschedulable",
      "TaintToleration",
      "ClusterAffinity",
      "APIEnablement",
      "SpreadConstraint",
    ]);
    expect(names(DEFAULT_PROFILE.score)).toEqual(["ClusterLocality", "AvailableCapacity"]);
    expect(names(DEFAULT_PROFILE.select)).toEqual(["SpreadConstraints", "MaxClusters"]);
    expect(names(DEFAULT_PROFILE.replicas)).toEqual(["ReplicaDivision"]);
  });

  it("disables and re-enables plugins per stage, in order", () => {
    const result = buildProfile({
      name: "p",
      plugins: {
        score: { disabled: ["*"], enabled: ["AvailableCapacity"] },
        filter: { disabled: ["APIEnablement"] },
      },
    });
    if (!result.ok) throw new Error(result.error);
    expect(names(result.profile.score)).toEqual(["AvailableCapacity"]);
    expect(names(result.profile.filter)).toEqual([
      "ClusterReady",
      "Unschedulable",
      "TaintToleration",
      "ClusterAffinity",
      "SpreadConstraint",
    ]);
  });

  it.each([
    [
      { filter: { enabled: ["NodeAffinity"] } },
      'scheduler profile "p": unknown filter plugin "NodeAffinity" (known: ClusterReady, Unschedulable, TaintToleration, ClusterAffinity, APIEnablement, SpreadConstraint)',
    ],
    [
      { score: { disabled: ["ClusterReady"] } },
      'scheduler profile "p": unknown score plugin "ClusterReady" (known: ClusterLocality, AvailableCapacity)',
    ],
    [
      { select: { enabled: ["MaxClusters"] } },
      'scheduler profile "p": select plugin "MaxClusters" is enabled twice',
    ],
  ])("fails on %j", (plugins, error) => {
    expect(buildProfile({ name: "p", plugins })).toEqual({ ok: false, error });
  });
});

describe("the plugin catalogue", () => {
  it("names exactly the plugins the scheduler holds, in default order", () => {
    expect(registeredPluginNames()).toEqual(DEFAULT_PLUGINS);
  });
});
