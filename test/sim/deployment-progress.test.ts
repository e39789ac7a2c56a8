import { describe, expect, it } from "vitest";
import { type ProgressInput, progressCondition } from "../../src/sim/deployment-progress.js";

// The Progressing condition of a Deployment, pass by pass, as the deployment controller keeps it.

const T0 = Date.parse("2026-11-29T10:00:00Z");
const counts = (replicas: number, updated: number, ready: number, available = ready) => ({
  replicas,
  updatedReplicas: updated,
  readyReplicas: ready,
  availableReplicas: available,
});
const condition = (reason: string, status: string, at: string) => ({
  type: "Progressing",
  status,
  reason,
  message: "",
  lastUpdateTime: at,
  lastTransitionTime: at,
});
const base: ProgressInput = {
  current: undefined,
  before: counts(0, 0, 0),
  after: counts(0, 0, 0),
  desired: 3,
  newGeneration: false,
  deadlineSeconds: 60,
  replicaSetName: "web-abc",
  now: T0,
};

describe("a Deployment's Progressing condition", () => {
  const cases: [string, Partial<ProgressInput>, { reason: string; status: string; deadlineAt?: number }][] = [
    [
      "a new generation starts a rollout",
      { newGeneration: true },
      { reason: "ReplicaSetUpdated", status: "True", deadlineAt: T0 + 60_000 },
    ],
    [
      "complete: every replica updated and available",
      { current: condition("ReplicaSetUpdated", "True", "2026-11-29T09:59:00Z"), after: counts(3, 3, 3) },
      { reason: "NewReplicaSetAvailable", status: "True" },
    ],
    [
      "more ready replicas is progress: the deadline moves",
      {
        current: condition("ReplicaSetUpdated", "True", "2026-11-29T09:00:00Z"),
        before: counts(4, 1, 2),
        after: counts(4, 1, 3),
      },
      { reason: "ReplicaSetUpdated", status: "True", deadlineAt: T0 + 60_000 },
    ],
    [
      "fewer old replicas is progress",
      {
        current: condition("ReplicaSetUpdated", "True", "2026-11-29T09:00:00Z"),
        before: counts(4, 1, 3),
        after: counts(3, 1, 3),
      },
      { reason: "ReplicaSetUpdated", status: "True", deadlineAt: T0 + 60_000 },
    ],
    [
      "no progress within the deadline: not yet",
      {
        current: condition("ReplicaSetUpdated", "True", "2026-11-29T09:59:30Z"),
        before: counts(4, 1, 3),
        after: counts(4, 1, 3),
      },
      { reason: "ReplicaSetUpdated", status: "True", deadlineAt: T0 + 30_000 },
    ],
    [
      "no progress past the deadline: timed out",
      {
        current: condition("ReplicaSetUpdated", "True", "2026-11-29T09:58:59Z"),
        before: counts(4, 1, 3),
        after: counts(4, 1, 3),
      },
      { reason: "ProgressDeadlineExceeded", status: "False" },
    ],
    [
      "a timed-out rollout stays timed out until it progresses",
      {
        current: condition("ProgressDeadlineExceeded", "False", "2026-11-29T09:00:00Z"),
        before: counts(4, 1, 3),
        after: counts(4, 1, 3),
      },
      { reason: "ProgressDeadlineExceeded", status: "False" },
    ],
    [
      "a complete rollout never times out later, even with pods lost",
      {
        current: condition("NewReplicaSetAvailable", "True", "2026-11-29T08:00:00Z"),
        before: counts(3, 3, 3),
        after: counts(3, 3, 1),
      },
      { reason: "NewReplicaSetAvailable", status: "True" },
    ],
  ];
  it.each(cases)("%s", (_name, input, expected) => {
    const outcome = progressCondition({ ...base, ...input });
    expect(outcome.condition).toMatchObject({
      type: "Progressing",
      reason: expected.reason,
      status: expected.status,
    });
    expect(outcome.deadlineAt).toBe(expected.deadlineAt);
  });

  it("keeps the times of an unchanged condition and moves lastUpdateTime on progress", () => {
    const current = condition("NewReplicaSetAvailable", "True", "2026-11-29T08:00:00Z");
    expect(progressCondition({ ...base, current, after: counts(3, 3, 3) }).condition).toBe(current);
    const updating = condition("ReplicaSetUpdated", "True", "2026-11-29T08:00:00Z");
    const next = progressCondition({
      ...base,
      current: updating,
      before: counts(3, 0, 3),
      after: counts(4, 1, 3),
    });
    expect(next.condition).toMatchObject({
      lastUpdateTime: "2026-11-29T10:00:00Z",
      lastTransitionTime: "2026-11-29T08:00:00Z",
    });
  });
});
