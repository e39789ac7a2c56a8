import { describe, expect, it } from "vitest";
import { parseJsonPath, readJsonPath } from "../../src/apimachinery/json-path.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { ObservedReplicas, ObservedState, TimedTaint } from "../../src/model/observed-state.js";
import { readState, stateRules } from "../../src/model/state-preservation.js";
import type { FleetModel } from "../../src/model/types.js";
import { restoreState } from "../../src/reconcile/restore-state.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { RenderResult } from "../../src/render/render-result.js";
import { appStatusPath, appStatusText } from "../../src/status/status-files.js";
import { minimalFleetWith, webDeployment } from "../helpers/minimal-fleet.js";

// Karmada's statePreservation: what the cluster a workload's replicas leave last reported in its
// status becomes labels on the workload in the clusters that take them.

const WEB = "apps/Deployment/shop/web";
const T0 = Date.parse("2026-12-01T12:00:00Z");
const LABEL = "failover.example.com/checkpoint";

const placement = (rules: string, extra = "") => `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  apps: [web]
  replicaScheduling:
    type: Divided
  failover:
    cluster:
      tolerationSeconds: 0
      purgeMode: Directly
${rules}${extra}`;

const RULES = `      statePreservation:
        rules:
          - aliasLabelName: ${LABEL}
            jsonPath: "{ .checkpoint.id }"
`;

function fleet(placementText: string): FleetModel {
  const loaded = loadFleet(
    minimalFleetWith({ "apps/web/deployment.yaml": webDeployment(4), "placements/web.yaml": placementText }),
  );
  if (!loaded.model)
    throw new Error(loaded.problems.map((p) => `${p.file}:${p.line} ${p.message}`).join("\n"));
  return loaded.model;
}

const seen = (state?: Record<string, string>): ObservedReplicas => ({
  desired: 2,
  ready: 2,
  unschedulable: 0,
  ...(state ? { state } : {}),
});

function observe(now: number, web: Record<string, ObservedReplicas>, eastDown = false): ObservedState {
  const taints: TimedTaint[] = [
    { key: "gitfleet.io/unreachable", effect: "NoSchedule", addedAt: T0 },
    { key: "gitfleet.io/unreachable", effect: "NoExecute", addedAt: T0 },
  ];
  const clusters: ObservedState["clusters"] = eastDown
    ? new Map([["east", { ready: false, reason: "Unreachable", since: T0, taints }]])
    : new Map();
  return { now, clusters, workloads: new Map([[WEB, new Map(Object.entries(web))]]) };
}

const labelsIn = (render: RenderResult, cluster: string) =>
  (
    render.objects.find((o) => o.identity === WEB && o.cluster === cluster)?.object.metadata as {
      labels?: Record<string, string>;
    }
  )?.labels ?? {};

describe("JSONPath templates as statePreservation writes them", () => {
  it.each([
    ["{ .checkpoint.id }", ["checkpoint", "id"]],
    ["{.conditions[0].reason}", ["conditions", 0, "reason"]],
    ["{$.jobs['latest-run'].id}", ["jobs", "latest-run", "id"]],
  ])("reads %s", (template, segments) => {
    expect(parseJsonPath(template)).toEqual({ segments });
  });

  it.each([".checkpoint.id", "{ .a[*] }", "{ ..id }", "{ .__proto__.x }", "{ .a[?(@.x)] }", "{ }"])(
    "refuses %s",
    (template) => {
      expect(parseJsonPath(template)).toHaveProperty("error");
    },
  );

  it("reads scalars only, and nothing an object's prototype holds", () => {
    const status = { checkpoint: { id: 42, done: true, path: "s3://x" }, list: [{ a: "b" }] };
    expect(readJsonPath(status, ["checkpoint", "id"])).toBe("42");
    expect(readJsonPath(status, ["checkpoint", "done"])).toBe("true");
    expect(readJsonPath(status, ["list", 0, "a"])).toBe("b");
    expect(readJsonPath(status, ["checkpoint"])).toBeUndefined();
    expect(readJsonPath(status, ["checkpoint", "toString"])).toBeUndefined();
    expect(readJsonPath(status, ["list", 3, "a"])).toBeUndefined();
  });

  it("keeps only values that are valid label values", () => {
    const rules = stateRules(fleet(placement(RULES)).placements[0]?.spec ?? {});
    expect(readState(rules, { status: { checkpoint: { id: "ckpt-7" } } })).toEqual({ [LABEL]: "ckpt-7" });
    expect(readState(rules, { status: { checkpoint: { id: "s3://bucket/ckpt 7" } } })).toBeUndefined();
    expect(readState(rules, { status: { checkpoint: { id: "x".repeat(64) } } })).toBeUndefined();
    expect(readState(rules, { status: { checkpoint: { id: "x".repeat(63) } } })).toEqual({
      [LABEL]: "x".repeat(63),
    });
  });
});

describe("a cluster failover that preserves state", () => {
  const model = fleet(placement(RULES));
  // Both clusters answer: each copy's checkpoint is remembered.
  const first = renderFleet(model, {
    observations: observe(T0 - 60_000, {
      east: seen({ [LABEL]: "ckpt-41" }),
      west: seen({ [LABEL]: "ckpt-9" }),
    }),
  });
  // east stops answering: its replicas move to west, which is told east's last checkpoint.
  const moved = renderFleet(model, {
    previous: first,
    observations: observe(T0, { west: seen({ [LABEL]: "ckpt-9" }) }, true),
  });

  it("remembers what each cluster's copy last gave", () => {
    expect(first.decisions[0]?.state).toEqual({ east: { [LABEL]: "ckpt-41" }, west: { [LABEL]: "ckpt-9" } });
    expect(moved.decisions[0]?.state?.east).toEqual({ [LABEL]: "ckpt-41" });
  });

  it("labels the workload in the cluster that took the replicas with the old cluster's value", () => {
    expect(moved.decisions[0]?.decision.clusters).toEqual({ west: 4 });
    expect(moved.decisions[0]?.failover?.preserved).toEqual([
      { from: "east", to: ["west"], labels: { [LABEL]: "ckpt-41" }, at: new Date(T0).toISOString() },
    ]);
    expect(labelsIn(moved, "west")[LABEL]).toBe("ckpt-41");
    expect(labelsIn(first, "west")[LABEL]).toBeUndefined();
  });

  it("keeps the labels while the failover stands, across a restart from the status branch", () => {
    const files = new Map(moved.objects.map((o) => [o.path, o.text]));
    files.set(appStatusPath("web"), appStatusText("web", "a".repeat(40), { ...moved, errors: [] }));
    const restored = restoreState(files, new Map(), model).render;
    expect(restored.decisions[0]?.failover?.preserved).toEqual(moved.decisions[0]?.failover?.preserved);
    expect(restored.decisions[0]?.state).toEqual(moved.decisions[0]?.state);
    const later = renderFleet(model, {
      previous: restored,
      observations: observe(T0 + 60_000, { west: seen({ [LABEL]: "ckpt-9" }) }, true),
    });
    expect(labelsIn(later, "west")[LABEL]).toBe("ckpt-41");
  });

  it("drops them when the Placement changes (the failover ends)", () => {
    const changed = fleet(placement(RULES, "  priority: 5\n"));
    const after = renderFleet(changed, {
      previous: moved,
      observations: observe(T0 + 60_000, { west: seen() }),
    });
    expect(labelsIn(after, "west")[LABEL]).toBeUndefined();
  });

  it("carries nothing without rules", () => {
    const plain = fleet(placement(""));
    const before = renderFleet(plain, {
      observations: observe(T0 - 60_000, { east: seen({ [LABEL]: "ckpt-41" }) }),
    });
    const after = renderFleet(plain, { previous: before, observations: observe(T0, {}, true) });
    expect(after.decisions[0]?.failover?.preserved).toBeUndefined();
    expect(labelsIn(after, "west")[LABEL]).toBeUndefined();
  });
});
