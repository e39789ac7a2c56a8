import { describe, expect, it } from "vitest";
import type { AutoscalingStatus } from "../../src/autoscale/autoscaling-round.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { FleetModel } from "../../src/model/types.js";
import { autoscalingFiles, readAutoscalingStatus } from "../../src/status/autoscaling-files.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

// status/autoscaling/: what a restarted controller reads back is what the last one decided, and a
// file changes only with a decision (not with every sample).

const at = (iso: string) => Date.parse(iso);

function model(): FleetModel {
  const loaded = loadFleet(
    minimalFleetWith({
      "autoscaling/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: FederatedHPA\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 10\n",
      "autoscaling/peak.yaml":
        'apiVersion: gitfleet.io/v1alpha1\nkind: CronScale\nmetadata:\n  name: peak\nspec:\n  scaleTargetRef: {apiVersion: gitfleet.io/v1alpha1, kind: FederatedHPA, name: web}\n  rules:\n    - {name: up, schedule: "0 8 * * *", targetMinReplicas: 6}\n',
    }),
  );
  if (!loaded.model) throw new Error(loaded.problems.map((p) => p.message).join("\n"));
  return loaded.model;
}

const STATUS: AutoscalingStatus = {
  hpas: new Map([
    [
      "shop/web",
      {
        replicas: 8,
        changedAt: at("2026-11-30T08:00:05Z"),
        reason: "cpu 91% > 70%",
        lastEvent: { at: at("2026-11-30T08:00:05Z"), change: 2 },
        bounds: { minReplicas: 6, maxReplicas: 10, by: "peak/up" },
        history: {
          recommendations: [{ at: at("2026-11-30T08:00:05Z"), replicas: 8 }],
          events: [{ at: at("2026-11-30T08:00:05Z"), change: 2 }],
        },
      },
    ],
  ]),
  crons: new Map([
    [
      "/peak",
      {
        history: {
          since: at("2026-11-29T00:00:00Z"),
          rules: [{ rule: "up", firedAt: at("2026-11-30T08:00:00Z"), outcome: "applied" }],
        },
        runs: [
          {
            rule: "up",
            firedAt: at("2026-11-30T08:00:00Z"),
            ranAt: at("2026-11-30T08:00:05Z"),
            outcome: "applied",
            result: "FederatedHPA web min 1 → 6, max 10 → 10",
          },
        ],
        nextAt: at("2026-12-01T08:00:00Z"),
      },
    ],
  ]),
  scaleDowns: new Map(),
};

describe("status/autoscaling/ files", () => {
  it("read back as written; the stabilization window restarts at the time of reading", () => {
    const fleet = model();
    const files = autoscalingFiles(fleet, STATUS, []);
    expect([...files.keys()].sort()).toEqual([
      "status/autoscaling/cron/peak.yaml",
      "status/autoscaling/hpa/shop.web.yaml",
    ]);
    const restart = at("2026-11-30T09:00:00Z");
    const read = readAutoscalingStatus(fleet, new Map([...files].map(([p, t]) => [p, t ?? ""])), restart);
    expect(read.crons).toEqual(STATUS.crons);
    const { history, ...rest } = read.hpas.get("shop/web") ?? { history: undefined };
    const { history: _written, ...expected } = STATUS.hpas.get("shop/web") ?? { history: undefined };
    expect(rest).toEqual(expected);
    expect(history).toEqual({
      recommendations: [{ at: restart, replicas: 8 }],
      events: [{ at: at("2026-11-30T08:00:05Z"), change: 2 }],
    });
  });

  it("do not change when only the recommendations and pruned events do", () => {
    const fleet = model();
    const before = autoscalingFiles(fleet, STATUS, []);
    const web = STATUS.hpas.get("shop/web");
    if (!web) throw new Error("no web");
    const later: AutoscalingStatus = {
      ...STATUS,
      hpas: new Map([["shop/web", { ...web, history: { recommendations: [], events: [] } }]]),
    };
    expect(autoscalingFiles(fleet, later, before.keys())).toEqual(before);
  });

  it("remove the files of autoscalers that are gone, and skip files that cannot be read", () => {
    const fleet = model();
    const files = autoscalingFiles(fleet, STATUS, ["status/autoscaling/hpa/old.yaml"]);
    expect(files.get("status/autoscaling/hpa/old.yaml")).toBeNull();
    const read = readAutoscalingStatus(fleet, new Map([["status/autoscaling/hpa/shop.web.yaml", "{{{"]]), 0);
    expect(read.hpas.size).toBe(0);
  });
});
