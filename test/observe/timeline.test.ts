import { describe, expect, it } from "vitest";
import { timelineEvent } from "../../src/observe/timeline.js";
import { commitEventKind } from "../../src/status/commit-event.js";

describe("status commits as timeline events", () => {
  it.each([
    ["Reconcile 1a6aa62: 8 apps changed (arena, catalog, …)", [], "reconcile"],
    ["web: Deployment shop/web 6 replicas east=3 west=3 → east=6", [], "reconcile"],
    ["Source 1a6aa62 is invalid: 2 errors; rendered/ stays at 0b1c2d3", [], "invalid"],
    ["failover: cluster west Unreachable for 75s; web 10 → east +5, north +5", [], "failover"],
    ["autoscale: storefront-api: hpa 8 → 12 (cpu 90% > 65%)", [], "scale"],
    [
      "sync: east Healthy, west Progressing",
      ["east: 0 applied, 0 pruned; Healthy", "west: 3 applied, 0 pruned; Progressing"],
      "rollout",
    ],
    ["sync: east Healthy, west Healthy", ["east: 0 applied, 0 pruned; Healthy"], "sync"],
    ["sync: east Healthy; migration: legacy/test: Syncing → Observing", [], "migration"],
    ["agent north: north Healthy", [], "agent"],
  ] as const)("%s → %s", (subject, body, kind) => {
    expect(commitEventKind([subject, ...body].join("\n"))).toBe(kind);
  });

  it("splits subject, body and the Source-Commit trailer", () => {
    const source = "f".repeat(40);
    const event = timelineEvent(
      "c".repeat(40),
      "2026-11-30T08:00:00.000Z",
      `failover: cluster west Unreachable for 75s; web 10 → east +5\n\nweb: east=5 west=5 → east=10\nkept: west 5\n\nSource-Commit: ${source}\nGitfleet-Controller: gitfleet@host\n`,
    );
    expect(event).toEqual({
      commit: "c".repeat(40),
      time: "2026-11-30T08:00:00.000Z",
      kind: "failover",
      subject: "failover: cluster west Unreachable for 75s; web 10 → east +5",
      body: ["web: east=5 west=5 → east=10", "kept: west 5"],
      sourceCommit: source,
    });
  });

  it("keeps a last paragraph that is not trailers in the body", () => {
    const event = timelineEvent(
      "c".repeat(40),
      "t",
      "sync: east Healthy\n\neast: 0 applied, 0 pruned; Healthy",
    );
    expect(event.body).toEqual(["east: 0 applied, 0 pruned; Healthy"]);
    expect(event.sourceCommit).toBeUndefined();
  });

  it("takes the kind from the Gitfleet-Event trailer, not from the subject", () => {
    const source = "f".repeat(40);
    const trailers = (kind: string) =>
      `\n\nSource-Commit: ${source}\nGitfleet-Controller: gitfleet@host\nGitfleet-Event: ${kind}\n`;
    // A subject that reads like another kind (an app named "failover") does not decide it.
    expect(timelineEvent("c".repeat(40), "t", `failover: 3 replicas${trailers("reconcile")}`).kind).toBe(
      "reconcile",
    );
    expect(timelineEvent("c".repeat(40), "t", `Reconcile 1a6aa62${trailers("scale")}`).kind).toBe("scale");
    // An unknown value falls back to the subject, as for commits written before the trailer.
    expect(timelineEvent("c".repeat(40), "t", `failover: west${trailers("nonsense")}`).kind).toBe("failover");
  });
});
