import { describe, expect, it } from "vitest";
import { DEFAULT_PROFILE, parseSimulationProfile } from "../../src/sim/simulation-profile.js";

describe("simulation profiles", () => {
  it("gives each cluster its own node pools, the default to the others", () => {
    const profile = parseSimulationProfile(
      `readyDelayMs: 50
hpaPeriodMs: 1000
default:
  nodePools:
    - count: 2
      allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
clusters:
  idc-west-1:
    nodePools:
      - count: 1
        allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "4"}
        labels: {gpu: "true"}
        taints: [{key: gpu, value: "true", effect: NoSchedule}]
`,
      "sim.yaml",
    );
    expect(profile.readyDelayMs).toBe(50);
    expect(profile.hpaPeriodMs).toBe(1000);
    expect(DEFAULT_PROFILE.hpaPeriodMs).toBeUndefined();
    expect(profile.poolsFor("aws-use1")).toEqual([
      { count: 2, allocatable: { cpu: "8", memory: "32Gi", pods: "110" } },
    ]);
    expect(profile.poolsFor("idc-west-1")).toEqual([
      {
        count: 1,
        allocatable: { cpu: "16", memory: "64Gi", "nvidia.com/gpu": "4" },
        labels: { gpu: "true" },
        taints: [{ key: "gpu", value: "true", effect: "NoSchedule" }],
      },
    ]);
    expect(DEFAULT_PROFILE.poolsFor("any")[0]).toMatchObject({ count: 3, allocatable: { cpu: "4" } });
  });

  it.each([
    [
      "default:\n  nodePools:\n    - count: two\n      allocatable: {cpu: '1'}\n",
      "sim.yaml:3:14: count must be a whole number",
    ],
    [
      "default:\n  nodePools:\n    - count: 1\n      allocatable: {cpu: lots}\n",
      'sim.yaml:4:26: "lots" is not a quantity',
    ],
    ["readyDelayMs: -1\n", "sim.yaml:1:15: readyDelayMs must be a non-negative number"],
    ["hpaPeriodMs: soon\n", "sim.yaml:1:14: hpaPeriodMs must be a positive number"],
  ])("names the file, line and column of a mistake: %j", (text, message) => {
    expect(() => parseSimulationProfile(text, "sim.yaml")).toThrow(message);
  });
});
