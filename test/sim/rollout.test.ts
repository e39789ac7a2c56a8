import { describe, expect, it } from "vitest";
import { rolloutPolicy, rolloutStep } from "../../src/sim/rollout.js";

const set = (name: string, replicas: number, available = replicas) => ({ name, replicas, available });

describe("rollout policy", () => {
  it.each([
    [{ replicas: 4 }, { desired: 4, strategy: "RollingUpdate", maxSurge: 1, maxUnavailable: 1 }],
    [{ replicas: 10 }, { desired: 10, strategy: "RollingUpdate", maxSurge: 3, maxUnavailable: 2 }],
    [
      { replicas: 3, strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } },
      { maxSurge: 0, maxUnavailable: 1 },
    ],
    [
      { replicas: 3, strategy: { rollingUpdate: { maxSurge: "50%", maxUnavailable: 2 } } },
      { maxSurge: 2, maxUnavailable: 2 },
    ],
    [{ strategy: { type: "Recreate" } }, { desired: 1, strategy: "Recreate" }],
  ])("%j resolves to %j", (spec, expected) => {
    expect(rolloutPolicy(spec)).toMatchObject(expected);
  });
});

describe("rollout step", () => {
  const rolling = rolloutPolicy({ replicas: 4 });
  it.each([
    ["a new Deployment gets all its replicas", set("new", 0, 0), [], 4, {}],
    ["the first step surges one and drops one", set("new", 0, 0), [set("old", 4)], 1, { old: 3 }],
    ["the surge room is used while no old pod may go yet", set("new", 1, 0), [set("old", 3)], 2, { old: 3 }],
    ["each available new pod lets an old one go", set("new", 1, 1), [set("old", 3)], 2, { old: 2 }],
    ["unavailable old pods go at once", set("new", 2, 2), [set("old", 2, 0)], 3, { old: 0 }],
    ["the end", set("new", 4, 4), [set("old", 0, 0)], 4, { old: 0 }],
  ] as const)("%s", (_name, next, old, expectedNext, expectedOld) => {
    const step = rolloutStep(rolling, next, old);
    expect(step.next).toBe(expectedNext);
    expect(Object.fromEntries(step.old)).toEqual(expectedOld);
  });

  it("never lets available replicas drop below desired − maxUnavailable, and never exceeds desired + maxSurge", () => {
    for (let desired = 1; desired <= 12; desired++) {
      const policy = rolloutPolicy({ replicas: desired });
      let next = set("new", 0, 0);
      let old = set("old", desired);
      for (let round = 0; round < 100 && (next.replicas < desired || old.replicas > 0); round++) {
        const step = rolloutStep(policy, next, [old]);
        const oldReplicas = step.old.get("old") ?? 0;
        expect(step.next + oldReplicas).toBeLessThanOrEqual(desired + policy.maxSurge);
        expect(next.available + Math.min(old.available, oldReplicas)).toBeGreaterThanOrEqual(
          desired - policy.maxUnavailable,
        );
        // Every pod the step asks for becomes available before the next step.
        next = set("new", step.next, step.next);
        old = set("old", oldReplicas, oldReplicas);
      }
      expect([next.replicas, old.replicas]).toEqual([desired, 0]);
    }
  });

  it("recreates: the old set empties before the new one grows", () => {
    const recreate = rolloutPolicy({ replicas: 3, strategy: { type: "Recreate" } });
    expect(rolloutStep(recreate, set("new", 0, 0), [set("old", 3)])).toEqual({
      next: 0,
      old: new Map([["old", 0]]),
    });
    expect(rolloutStep(recreate, set("new", 0, 0), [set("old", 0, 0)]).next).toBe(3);
  });
});
