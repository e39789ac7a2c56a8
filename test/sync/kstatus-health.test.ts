import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import type { HealthStatus } from "../../src/model/health.js";
import { assessHealth } from "../../src/sync/health.js";

// Custom resources with no ResourceInterpreter, judged by the kstatus conventions as Flux judges them.
const widget = (status: JsonMap | undefined, generation = 3): JsonMap => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "gadget", namespace: "shop", generation },
  spec: { size: 3 },
  ...(status ? { status } : {}),
});
const ready = (status: string, extra: JsonMap = {}) => ({ type: "Ready", status, ...extra });

describe("health by the kstatus conventions", () => {
  const cases: [string, JsonMap, HealthStatus, string?][] = [
    ["no status: Healthy once it exists", widget(undefined), "Healthy"],
    ["Ready=True", widget({ observedGeneration: 3, conditions: [ready("True")] }), "Healthy"],
    [
      "Ready=False: Degraded, with its reason and message",
      widget({ conditions: [ready("False", { reason: "QuotaExceeded", message: "no room" })] }),
      "Degraded",
      "not ready: QuotaExceeded: no room",
    ],
    ["Ready=Unknown", widget({ conditions: [ready("Unknown")] }), "Progressing", "readiness unknown"],
    [
      "observedGeneration behind generation, whatever Ready says",
      widget({ observedGeneration: 2, conditions: [ready("True")] }),
      "Progressing",
      "generation 3 not observed yet (observed 2)",
    ],
    [
      "Ready observed for an older generation",
      widget({ conditions: [ready("True", { observedGeneration: 2 })] }),
      "Progressing",
      "Ready was reported for an older generation",
    ],
    [
      "Reconciling=True comes before Ready=False",
      widget({
        conditions: [{ type: "Reconciling", status: "True", reason: "Progressing" }, ready("False")],
      }),
      "Progressing",
      "reconciling: Progressing",
    ],
    [
      "Stalled=True",
      widget({
        conditions: [
          { type: "Stalled", status: "True", reason: "InstallFailed", message: "chart not found" },
        ],
      }),
      "Degraded",
      "stalled: InstallFailed: chart not found",
    ],
    ["other conditions only", widget({ conditions: [{ type: "Available", status: "False" }] }), "Healthy"],
    // External Secrets Operator's ExternalSecret, as it reports a store it cannot read (docs/secrets.md).
    [
      "an ExternalSecret whose store refused it",
      {
        apiVersion: "external-secrets.io/v1",
        kind: "ExternalSecret",
        metadata: { name: "db", namespace: "shop", generation: 1 },
        spec: { secretStoreRef: { name: "vault", kind: "ClusterSecretStore" } },
        status: {
          conditions: [
            {
              type: "Ready",
              status: "False",
              reason: "SecretSyncedError",
              message: "could not get secret data from provider",
            },
          ],
        },
      },
      "Degraded",
      "not ready: SecretSyncedError: could not get secret data from provider",
    ],
    [
      "an ExternalSecret synced",
      {
        apiVersion: "external-secrets.io/v1",
        kind: "ExternalSecret",
        metadata: { name: "db", namespace: "shop", generation: 1 },
        status: {
          refreshTime: "2026-12-04T10:00:00Z",
          conditions: [{ type: "Ready", status: "True", reason: "SecretSynced" }],
        },
      },
      "Healthy",
    ],
  ];
  it.each(cases)("%s", (_name, live, status, reason) => {
    const health = assessHealth(live);
    expect(health.status).toBe(status);
    if (reason !== undefined) expect(health.reason).toBe(reason);
  });

  it("lets a ResourceInterpreter decide when there is one", () => {
    const live = widget({ conditions: [ready("False")], phase: "Running" });
    expect(
      assessHealth(live, {
        health: { rules: [{ field: "status.phase", operator: "Equal", value: "Running" }] },
      }),
    ).toEqual({
      status: "Healthy",
    });
  });

  it("judges a bare Pod by its phase and readiness, not by kstatus", () => {
    const pod = (phase: string, readyStatus = "False"): JsonMap => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      status: { phase, conditions: [ready(readyStatus)] },
    });
    expect(assessHealth(pod("Succeeded")).status).toBe("Healthy");
    expect(assessHealth(pod("Running", "True")).status).toBe("Healthy");
    expect(assessHealth(pod("Running")).status).toBe("Progressing");
    expect(assessHealth(pod("Failed")).status).toBe("Degraded");
  });
});
