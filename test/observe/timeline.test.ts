import { describe, expect, it } from "vitest";
import { EVENT_KINDS } from "../../src/model/trailers.js";
import { timelineEvent } from "../../src/observe/timeline.js";

describe("status commits as timeline events", () => {
  const trailers = (kind?: string) =>
    `\n\nSource-Commit: ${"f".repeat(40)}\nGitfleet-Controller: gitfleet@host${kind ? `\nGitfleet-Event: ${kind}` : ""}\n`;

  it.each(EVENT_KINDS.map((kind) => [kind]))("reads the kind %s from the trailer alone", (kind) => {
    // A subject that reads like another kind does not change what the writer recorded.
    const event = timelineEvent(
      "c".repeat(40),
      "2026-11-30T08:00:00.000Z",
      `failover: west${trailers(kind)}`,
    );
    expect(event.kind).toBe(kind);
  });

  it.each([
    ["no Gitfleet-Event trailer", `failover: cluster west Unreachable for 75s${trailers()}`],
    ["a kind gitfleet does not write", `failover: west${trailers("meltdown")}`],
    [
      "a trailer quoted in the body, not the last paragraph",
      `failover: west\n\nGitfleet-Event: failover\n\nSigned-off-by: x <x@y>\n`,
    ],
  ])("a commit with %s is a reconcile: the subject is never read for a kind", (_, message) => {
    expect(timelineEvent("c".repeat(40), "2026-11-30T08:00:00.000Z", message).kind).toBe("reconcile");
  });

  it("splits subject, body and the Source-Commit trailer", () => {
    const source = "f".repeat(40);
    const event = timelineEvent(
      "c".repeat(40),
      "2026-11-30T08:00:00.000Z",
      `failover: cluster west Unreachable for 75s; web 10 → east +5\n\nweb: east=5 west=5 → east=10\nkept: west 5\n\nSource-Commit: ${source}\nGitfleet-Controller: gitfleet@host\nGitfleet-Event: failover\n`,
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
});
