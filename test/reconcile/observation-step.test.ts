import { describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { ObservedState } from "../../src/model/observed-state.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import {
  EMPTY_STATE,
  observationStep,
  observationsMoved,
  reconcileStep,
} from "../../src/reconcile/reconcile-step.js";
import { restoreState } from "../../src/reconcile/restore-state.js";
import { messageText, statusMessage } from "../../src/status/status-message.js";
import { MINIMAL_FLEET } from "../helpers/minimal-fleet.js";

// The reconcile loop's failover step: due only when observations change the render, a message that
// says what moved, and a record that a restarted controller reads back from the status branch.

const T0 = Date.parse("2026-11-29T12:00:00Z");
const WEB = "apps/Deployment/shop/web";
const tree = fileTreeFromText({
  ...MINIMAL_FLEET,
  "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  apps: [web]
  replicaScheduling:
    type: Divided
  failover:
    cluster:
      tolerationSeconds: 30
`,
});
const SOURCE = "a".repeat(40);

function westDown(now: number, web: Record<string, number> = {}): ObservedState {
  const since = T0;
  const noExecuteAt = T0 + 60_000;
  return {
    now,
    clusters: new Map([
      [
        "west",
        {
          ready: false,
          reason: "Unreachable",
          since,
          taints: [
            { key: "gitfleet.io/unreachable", effect: "NoSchedule" as const, addedAt: since },
            ...(now >= noExecuteAt
              ? [{ key: "gitfleet.io/unreachable", effect: "NoExecute" as const, addedAt: noExecuteAt }]
              : []),
          ],
        },
      ],
    ]),
    workloads: new Map([
      [WEB, new Map(Object.entries(web).map(([c, n]) => [c, { desired: n, ready: n, unschedulable: 0 }]))],
    ]),
  };
}

describe("the failover step", () => {
  const first = reconcileStep(EMPTY_STATE, {
    sourceCommit: SOURCE,
    tree,
    changedPaths: ALL,
    observations: { now: T0 - 1000, clusters: new Map(), workloads: new Map() },
  }).state;

  it("is due only when an observation changes what would be rendered", () => {
    expect(observationsMoved(first, { now: T0, clusters: new Map(), workloads: new Map() })).toBe(false);
    expect(observationsMoved(first, westDown(T0 + 1000))).toBe(true);
    const frozen = observationStep(first, westDown(T0 + 1000));
    expect(messageText(frozen.message)).toBe(
      "failover: cluster west Unreachable: its replicas stay, it takes no new ones",
    );
    // The toleration running out (60 s of NotReady, then 30 s of NoExecute) is due without a new probe result.
    expect(observationsMoved(frozen.state, westDown(T0 + 5000))).toBe(false);
    expect(observationsMoved(frozen.state, westDown(T0 + 90_000))).toBe(true);
  });

  it("moves, says so, and continues the same way after a restart from the status branch", () => {
    const frozen = observationStep(first, westDown(T0 + 1000)).state;
    const moved = observationStep(frozen, westDown(T0 + 90_000));
    expect(moved.message.head).toEqual({
      kind: "failover",
      line: "failover: cluster west Unreachable for 90s; web 2 → east +2",
    });
    expect(messageText(moved.message)).toContain(
      "web: 2 old replicas stay on west (purgeMode Gracefully until ",
    );
    expect([...moved.changes.keys()]).toContain("rendered/east/shop/apps.Deployment.web.yaml");
    expect(moved.changes.has("status/source.yaml")).toBe(false);

    const restored = restoreState(moved.state.files, tree, moved.state.model);
    expect(restored.render.decisions.map((d) => d.failover)).toEqual(
      moved.state.render.decisions.map((d) => d.failover),
    );
    const ready = westDown(T0 + 120_000, { east: 4 });
    const live = observationStep(moved.state, ready);
    const afterRestart = observationStep(restored, ready);
    expect(live.message).toEqual(
      statusMessage("failover", "failover: web: the 2 old replicas on west are removed"),
    );
    expect(afterRestart.changes).toEqual(live.changes);
    // A restart knows no earlier observations: a quiet fleet is not rendered again, a disturbed one is.
    const quiet = restoreState(live.state.files, tree, live.state.model);
    expect(observationsMoved(quiet, { now: T0 + 200_000, clusters: new Map(), workloads: new Map() })).toBe(
      false,
    );
    expect(observationsMoved(quiet, westDown(T0 + 200_000))).toBe(true);
  });
});
