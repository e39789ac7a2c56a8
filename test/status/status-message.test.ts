import { describe, expect, it } from "vitest";
import { syncCommitMessage } from "../../src/status/observed-status.js";
import {
  carrying,
  eventKindOf,
  eventKindsOf,
  headedBySteps,
  messageText,
  type StatusMessage,
  statusMessage,
} from "../../src/status/status-message.js";
import type { ClusterSyncResult, ObjectResult } from "../../src/sync/sync-result.js";

// A status commit's message is data: its kind is named where it is composed, and the text is built
// from it. These are the layouts people read in `git log`, byte for byte.

const object = (action: ObjectResult["action"]): ObjectResult =>
  ({
    identity: "apps/Deployment/shop/web",
    app: "web",
    action,
    health: { status: "Healthy" },
  }) as ObjectResult;

const result = (cluster: string, actions: ObjectResult["action"][]): ClusterSyncResult =>
  ({
    cluster,
    sourceCommit: "a".repeat(40),
    reachable: true,
    objects: actions.map(object),
    pruned: [],
    retained: [],
    inventory: { entries: [] },
  }) as unknown as ClusterSyncResult;

describe("status messages", () => {
  it.each<{ case: string; message: StatusMessage; text: string; kinds: string[] }>([
    {
      case: "a subject alone",
      message: statusMessage("reconcile", "Reconcile 1a6aa62: no rendered change"),
      text: "Reconcile 1a6aa62: no rendered change",
      kinds: ["reconcile"],
    },
    {
      case: "a subject and its body",
      message: statusMessage("failover", "failover: west Unreachable", ["web: 2 off west", "", "kept: 1"]),
      text: "failover: west Unreachable\n\nweb: 2 off west\n\nkept: 1",
      kinds: ["failover"],
    },
    {
      case: "events carried by two writers, a paragraph each",
      message: carrying(
        carrying(statusMessage("failover", "failover: west Unreachable", ["web: 2 off west"]), [
          { kind: "scale", line: "autoscale: web 2 → 4" },
        ]),
        [{ kind: "reconcile", line: "repair: 1 file written again" }],
      ),
      text: "failover: west Unreachable\n\nweb: 2 off west\n\nautoscale: web 2 → 4\n\nrepair: 1 file written again",
      kinds: ["failover", "scale", "reconcile"],
    },
    {
      case: "no events carried: the message as it was",
      message: carrying(statusMessage("scale", "autoscale: web 2 → 4"), []),
      text: "autoscale: web 2 → 4",
      kinds: ["scale"],
    },
  ])("$case", ({ message, text, kinds }) => {
    expect(messageText(message)).toBe(text);
    expect(eventKindsOf(message)).toEqual(kinds);
    expect(eventKindOf(message)).toBe(kinds[0]);
  });

  it.each([
    {
      case: "a cluster that took a change: rollout",
      results: [result("east", ["created"])],
      kind: "rollout",
    },
    {
      case: "nothing applied anywhere: sync",
      results: [result("east", ["unchanged"]), result("west", ["held", "drifted"])],
      kind: "sync",
    },
  ])("a sync's kind is what it did — $case", ({ results, kind }) => {
    expect(eventKindOf(syncCommitMessage(results))).toBe(kind);
  });

  it("an agent's sync is an agent event, under its own subject", () => {
    const message = syncCommitMessage([result("north", ["created"])], {
      subject: "agent north",
      kind: "agent",
    });
    expect(message.head).toEqual({ kind: "agent", line: "agent north: north Healthy" });
    expect(messageText(message)).toBe("agent north: north Healthy\n\nnorth: 1 applied, 0 pruned; Healthy");
  });

  it.each([
    { first: "migration", kinds: ["migration", "upgrade", "restore"] },
    { first: "upgrade", kinds: ["upgrade", "restore"] },
    { first: "restore", kinds: ["restore"] },
  ] as const)("a sync that records batch steps is named by the first: $first", ({ first, kinds }) => {
    const steps = kinds.map((kind) => ({ kind, line: `${kind}-1/b1: Syncing → Observing` }));
    const message = headedBySteps(syncCommitMessage([result("east", ["created"])]), steps);
    expect(eventKindOf(message)).toBe(first);
    expect(messageText(message)).toBe(
      [
        `sync: east Healthy; ${kinds.map((k) => `${k}: ${k}-1/b1: Syncing → Observing`).join("; ")}`,
        "",
        "east: 1 applied, 0 pruned; Healthy",
        "",
        ...kinds.map((k) => `${k} ${k}-1/b1: Syncing → Observing`),
      ].join("\n"),
    );
  });

  it("a sync with no batch steps keeps its own kind and text", () => {
    const sync = syncCommitMessage([result("east", ["unchanged"])]);
    expect(headedBySteps(sync, [])).toBe(sync);
  });
});

describe("carrying and steps at their edges", () => {
  it("carrying no events leaves the message as it is: no empty paragraph", () => {
    const message = statusMessage("sync", "sync: east Healthy");
    expect(carrying(message, [])).toBe(message);
    expect(messageText(carrying(message, []))).toBe("sync: east Healthy");
  });

  it("joins several steps of one kind with semicolons in the subject", () => {
    const message = headedBySteps(statusMessage("sync", "sync: east Healthy"), [
      { kind: "migration", line: "m/b1: Syncing → Observing" },
      { kind: "migration", line: "m/b2: Pending → Syncing" },
    ]);
    expect(message.head.line).toBe(
      "sync: east Healthy; migration: m/b1: Syncing → Observing; m/b2: Pending → Syncing",
    );
  });
});
