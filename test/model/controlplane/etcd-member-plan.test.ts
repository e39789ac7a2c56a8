import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type EtcdAction,
  type EtcdMembersInput,
  type EtcdMemberView,
  planEtcdMembers,
  quorumOf,
  type ReplacementView,
} from "../../../src/model/controlplane/etcd-member-plan.js";

const NOW = Date.parse("2026-12-06T01:00:00Z");
const SECOND = 1000;
const NOT_READY_FOR = 10 * SECOND;

const ids = { "etcd-0": "a0", "etcd-1": "a1", "etcd-2": "a2" };

function member(name: string, over: Partial<EtcdMemberView> = {}): EtcdMemberView {
  return {
    name,
    podUid: `uid-${name}`,
    ready: "True",
    readySince: NOW - 3_600_000,
    id: ids[name as keyof typeof ids],
    ...over,
  };
}

function input(over: Partial<EtcdMembersInput> = {}): EtcdMembersInput {
  return {
    etcd: { name: "etcd", replicas: 3, repair: { enabled: true, notReadyForMs: NOT_READY_FOR } },
    members: ["etcd-0", "etcd-1", "etcd-2"].map((m) => member(m)),
    knownIds: ids,
    joinExisting: true,
    replacement: undefined,
    requests: [],
    done: [],
    now: NOW,
    ...over,
  };
}

// "remove etcd-1 a1 via etcd-0,etcd-2", … — the actions other than record.
function steps(actions: readonly EtcdAction[]): string[] {
  return actions.flatMap((a) => {
    if (a.kind === "record") return [];
    if (a.kind === "remove" || a.kind === "add")
      return [`${a.kind} ${a.member} ${a.id} via ${a.endpoints.join(",")}`];
    if (a.kind === "wipe") return [`wipe ${a.member} pod ${a.podUid}`];
    if (a.kind === "moveLeader")
      return [`move-leader ${a.member} to ${a.to} ${a.toId} via ${a.endpoints.join(",")}`];
    if (a.kind === "forgetMove") return [`forget move ${a.member}`];
    return [`finish ${a.member}`];
  });
}

const down = (name: string, forMs: number, ready: EtcdMemberView["ready"] = "False") =>
  member(name, { ready, readySince: NOW - forMs, id: undefined });

describe("an etcd member's replacement", () => {
  it.each<[string, number, string[]]>([
    ["just inside notReadyFor", NOT_READY_FOR - 1, []],
    ["at it", NOT_READY_FOR, ["remove etcd-1 a1 via etcd-0,etcd-2"]],
    ["just past it", NOT_READY_FOR + 1, ["remove etcd-1 a1 via etcd-0,etcd-2"]],
  ])("a member NotReady %s is removed only from then on", (_name, forMs, expected) => {
    const members = [member("etcd-0"), down("etcd-1", forMs), member("etcd-2")];
    const plan = planEtcdMembers(input({ members }));
    expect(steps(plan.actions)).toEqual(expected);
    expect(plan.moving).toBe(true);
    expect(plan.notReady).toEqual({ "etcd-1": forMs });
  });

  it("never replaces or records the member of an etcd of one, however long it is NotReady, and says how long", () => {
    const plan = planEtcdMembers(
      input({
        etcd: { name: "etcd", replicas: 1, repair: { enabled: true, notReadyForMs: NOT_READY_FOR } },
        members: [down("etcd-0", NOT_READY_FOR + 1)],
        knownIds: {},
        joinExisting: false,
      }),
    );
    expect(plan).toEqual({
      actions: [],
      notReady: { "etcd-0": NOT_READY_FOR + 1 },
      requests: {},
      moving: false,
    });
  });

  it("takes an Unknown readiness (the node is gone) as NotReady", () => {
    const members = [member("etcd-0"), member("etcd-1"), down("etcd-2", NOT_READY_FOR, "Unknown")];
    expect(steps(planEtcdMembers(input({ members })).actions)).toEqual([
      "remove etcd-2 a2 via etcd-0,etcd-1",
    ]);
  });

  it.each<[string, number, 3 | 5, number, boolean]>([
    ["3 members, 2 others Ready", 3, 3, 1, true],
    ["3 members, 1 other Ready", 3, 3, 2, false],
    ["5 members, 3 others Ready", 5, 5, 2, true],
    ["5 members, 2 others Ready", 5, 5, 3, false],
  ])("keeps quorum: %s", (_name, _n, replicas, downCount, replaced) => {
    const names = Array.from({ length: replicas }, (_, i) => `etcd-${i}`);
    const known = Object.fromEntries(names.map((n, i) => [n, `a${i}`]));
    const members = names.map((n, i) =>
      i < downCount ? down(n, NOT_READY_FOR) : member(n, { id: known[n] }),
    );
    const plan = planEtcdMembers(
      input({
        etcd: { name: "etcd", replicas, repair: { enabled: true, notReadyForMs: NOT_READY_FOR } },
        members,
        knownIds: known,
      }),
    );
    expect(steps(plan.actions).length).toBe(replaced ? 1 : 0);
    if (!replaced) expect(plan.held).toContain(`needs ${quorumOf(replicas)} to replace one`);
  });

  it("replaces one member at a time, the first by name", () => {
    const names = ["etcd-0", "etcd-1", "etcd-2", "etcd-3", "etcd-4"];
    const known = Object.fromEntries(names.map((n, i) => [n, `a${i}`]));
    const members = names.map((n) =>
      n === "etcd-3" || n === "etcd-1" ? down(n, 60_000) : member(n, { id: known[n] }),
    );
    const plan = planEtcdMembers(
      input({
        etcd: { name: "etcd", replicas: 5, repair: { enabled: true, notReadyForMs: NOT_READY_FOR } },
        members,
        knownIds: known,
      }),
    );
    expect(steps(plan.actions)).toEqual(["remove etcd-1 a1 via etcd-0,etcd-2,etcd-4"]);
  });

  it("does not replace a member whose ID it never saw, and says so", () => {
    const members = [member("etcd-0"), down("etcd-1", 60_000), member("etcd-2")];
    const plan = planEtcdMembers(input({ members, knownIds: { "etcd-0": "a0", "etcd-2": "a2" } }));
    expect(steps(plan.actions)).toEqual([]);
    expect(plan.held).toContain("never seen");
  });

  it("does nothing when repair is off", () => {
    const members = [member("etcd-0"), down("etcd-1", 60_000), member("etcd-2")];
    const plan = planEtcdMembers(
      input({
        etcd: { name: "etcd", replicas: 3, repair: { enabled: false, notReadyForMs: NOT_READY_FOR } },
        members,
      }),
    );
    expect(steps(plan.actions)).toEqual([]);
    expect(plan.held).toBeUndefined();
  });

  const replacing = (over: Partial<ReplacementView>): ReplacementView => ({
    member: "etcd-1",
    id: "a1",
    remove: "Complete",
    ...over,
  });
  const lost = [member("etcd-0"), down("etcd-1", 60_000), member("etcd-2")];

  it.each<[string, Partial<ReplacementView>, EtcdMemberView[], string[], string]>([
    ["removing", { remove: "Running" }, lost, [], "removing"],
    ["removed: add it back", {}, lost, ["add etcd-1 a1 via etcd-0,etcd-2"], "adding"],
    ["adding", { add: "Running" }, lost, [], "adding"],
    [
      "added: its pod and volume go",
      { add: "Complete" },
      lost,
      ["wipe etcd-1 pod uid-etcd-1"],
      "starting on a new volume",
    ],
    [
      "the wipe recorded but the pod still there: again, the same pod",
      { add: "Complete", wipedPod: "uid-etcd-1" },
      lost,
      ["wipe etcd-1 pod uid-etcd-1"],
      "starting on a new volume",
    ],
    [
      "its new pod starting",
      { add: "Complete", wipedPod: "uid-etcd-1" },
      [member("etcd-0"), down("etcd-1", 1000), member("etcd-2")].map((m) =>
        m.name === "etcd-1" ? { ...m, podUid: "uid-new" } : m,
      ),
      [],
      "starting on a new volume",
    ],
    [
      "its new pod not made yet",
      { add: "Complete", wipedPod: "uid-etcd-1" },
      [
        member("etcd-0"),
        { name: "etcd-1", podUid: undefined, ready: "Unknown", readySince: NOW },
        member("etcd-2"),
      ],
      [],
      "starting on a new volume",
    ],
    [
      "its new pod Ready: done",
      { add: "Complete", wipedPod: "uid-etcd-1" },
      [member("etcd-0"), member("etcd-1", { podUid: "uid-new", id: "b1" }), member("etcd-2")],
      ["finish etcd-1"],
      "joined",
    ],
  ])("goes on from where its Jobs say: %s", (_name, over, members, expected, step) => {
    const plan = planEtcdMembers(input({ members, replacement: replacing(over) }));
    expect(steps(plan.actions)).toEqual(expected);
    expect(plan.replacing).toEqual({ member: "etcd-1", step });
    expect(plan.moving).toBe(true);
  });

  it.each<[string, Partial<ReplacementView>]>([
    ["the remove Job", { remove: "Failed" }],
    ["the add Job", { add: "Failed" }],
  ])("holds when %s failed, and names what to delete to start again", (_name, over) => {
    const plan = planEtcdMembers(input({ members: lost, replacement: replacing(over) }));
    expect(steps(plan.actions)).toEqual([]);
    expect(plan.held).toContain("gitfleet.io/etcd-replacement=etcd-1");
  });

  it("does not add the member back through no one", () => {
    const members = [down("etcd-0", 60_000), down("etcd-1", 60_000), down("etcd-2", 60_000)];
    const plan = planEtcdMembers(input({ members, replacement: replacing({}) }));
    expect(steps(plan.actions)).toEqual([]);
    expect(plan.held).toContain("no other member is Ready");
  });
});

describe("what is recorded of the members", () => {
  it("records IDs as members report them, and tells new members to join once all three have", () => {
    const first = planEtcdMembers(
      input({
        knownIds: {},
        joinExisting: false,
        members: [member("etcd-0"), member("etcd-1"), member("etcd-2", { ready: "False", id: undefined })],
      }),
    );
    expect(first.actions[0]).toEqual({
      kind: "record",
      ids: { "etcd-0": "a0", "etcd-1": "a1" },
      joinExisting: false,
      done: [],
    });
    const second = planEtcdMembers(
      input({ knownIds: { "etcd-0": "a0", "etcd-1": "a1" }, joinExisting: false }),
    );
    expect(second.actions[0]).toEqual({ kind: "record", ids, joinExisting: true, done: [] });
    // Nothing new: nothing written.
    expect(planEtcdMembers(input()).actions).toEqual([]);
  });

  it("keeps the ID of a member that stopped answering, and takes a member's new one", () => {
    const members = [member("etcd-0"), down("etcd-1", 1000), member("etcd-2", { id: "b2" })];
    expect(planEtcdMembers(input({ members })).actions[0]).toEqual({
      kind: "record",
      ids: { "etcd-0": "a0", "etcd-1": "a1", "etcd-2": "b2" },
      joinExisting: true,
      done: [],
    });
  });
});

describe("a member replaced because an EtcdMemberReplacement asks", () => {
  const ask = (name: string, member: string) => ({ name, member });
  // The request each remove or add carries, beside the step.
  const carried = (actions: readonly EtcdAction[]) =>
    actions.flatMap((a) => (a.kind === "remove" || a.kind === "add" ? [a.request] : []));

  it("replaces a Ready member, with repair on or off, and says so", () => {
    for (const enabled of [true, false]) {
      const plan = planEtcdMembers(
        input({
          etcd: { name: "etcd", replicas: 3, repair: { enabled, notReadyForMs: NOT_READY_FOR } },
          requests: [ask("disk-swap", "etcd-1")],
        }),
      );
      expect(steps(plan.actions)).toEqual(["remove etcd-1 a1 via etcd-0,etcd-2"]);
      expect(carried(plan.actions)).toEqual(["disk-swap"]);
      expect(plan.requests).toEqual({ "disk-swap": "Replacing" });
      expect(plan.moving).toBe(true);
    }
  });

  it.each<[string, EtcdMemberView[], string | undefined]>([
    [
      "another member NotReady, not yet due: only one other Ready of three",
      [member("etcd-0"), member("etcd-1"), down("etcd-2", 1000)],
      "EtcdMemberReplacement disk-swap asks to replace etcd-1, but only 1 other member is Ready and the etcd of 3 needs 2 to replace one",
    ],
    [
      "its member ID never seen",
      [member("etcd-0"), member("etcd-1"), member("etcd-2")],
      "EtcdMemberReplacement disk-swap asks to replace etcd-1, and its member ID was never seen (it never reported Ready): it is not replaced",
    ],
  ])("is held when %s", (name, members, held) => {
    const knownIds = name.includes("never seen") ? { "etcd-0": "a0", "etcd-2": "a2" } : ids;
    const noId = name.includes("never seen")
      ? members.map((m) => (m.name === "etcd-1" ? { ...m, id: undefined } : m))
      : members;
    const plan = planEtcdMembers(input({ members: noId, knownIds, requests: [ask("disk-swap", "etcd-1")] }));
    expect(steps(plan.actions)).toEqual([]);
    expect(plan.held).toBe(held);
    expect(plan.requests).toEqual({ "disk-swap": "Waiting" });
  });

  it.each<[string, EtcdMembersInput["leaderMove"], EtcdMemberView[], string[], string, string | undefined]>([
    [
      "hands leadership to the first other Ready member before anything else",
      undefined,
      [member("etcd-0"), member("etcd-1", { leader: true }), member("etcd-2")],
      ["move-leader etcd-1 to etcd-0 a0 via etcd-1,etcd-0,etcd-2"],
      "moving leadership",
      undefined,
    ],
    [
      "to a Ready member whose metrics were not read, by the ID last seen",
      undefined,
      [member("etcd-0", { id: undefined }), member("etcd-1", { leader: true }), member("etcd-2")],
      ["move-leader etcd-1 to etcd-0 a0 via etcd-1,etcd-0,etcd-2"],
      "moving leadership",
      undefined,
    ],
    [
      "waits while the move runs",
      { member: "etcd-1", phase: "Running" },
      [member("etcd-0"), member("etcd-1", { leader: true }), member("etcd-2")],
      [],
      "moving leadership",
      undefined,
    ],
    [
      "moves again when leadership came back after a move that completed",
      { member: "etcd-1", phase: "Complete" },
      [member("etcd-0"), member("etcd-1", { leader: true }), member("etcd-2")],
      ["forget move etcd-1"],
      "moving leadership",
      undefined,
    ],
    [
      "is held by a move that failed",
      { member: "etcd-1", phase: "Failed" },
      [member("etcd-0"), member("etcd-1", { leader: true }), member("etcd-2")],
      [],
      "moving leadership failed",
      "replacing etcd-1: the move-leader Job failed; delete the etcd's replacement Jobs (gitfleet.io/etcd-replacement=etcd-1) to start again",
    ],
    [
      "removes it once another leads (the completed move stays until the replacement ends)",
      { member: "etcd-1", phase: "Complete" },
      [member("etcd-0", { leader: true }), member("etcd-1", { leader: false }), member("etcd-2")],
      ["remove etcd-1 a1 via etcd-0,etcd-2"],
      "removing",
      undefined,
    ],
    [
      "removes it when its metrics do not say it leads (a member unread is not held forever)",
      undefined,
      [member("etcd-0"), member("etcd-1", { leader: undefined }), member("etcd-2")],
      ["remove etcd-1 a1 via etcd-0,etcd-2"],
      "removing",
      undefined,
    ],
  ])("a requested member that leads the etcd: %s", (_name, leaderMove, members, expected, step, held) => {
    const plan = planEtcdMembers(input({ members, leaderMove, requests: [ask("disk-swap", "etcd-1")] }));
    expect(steps(plan.actions)).toEqual(expected);
    expect(plan.replacing).toEqual({ member: "etcd-1", step });
    expect(plan.held).toBe(held);
    expect(plan.requests).toEqual({ "disk-swap": "Replacing" });
    expect(plan.moving).toBe(true);
  });

  it("holds a leader with no other Ready member's ID to hand leadership to", () => {
    const members = [
      member("etcd-0", { id: undefined }),
      member("etcd-1", { leader: true }),
      member("etcd-2", { id: undefined }),
    ];
    const plan = planEtcdMembers(
      input({ members, knownIds: { "etcd-1": "a1" }, requests: [ask("disk-swap", "etcd-1")] }),
    );
    expect(steps(plan.actions)).toEqual([]);
    expect(plan.held).toBe(
      "EtcdMemberReplacement disk-swap asks to replace etcd-1, but it leads the etcd and no other Ready member's ID is known to hand leadership to",
    );
  });

  it("does nothing for a request done, and keeps only the done requests still asked for", () => {
    const plan = planEtcdMembers(
      input({ requests: [ask("disk-swap", "etcd-1")], done: ["disk-swap", "removed-since"] }),
    );
    expect(plan.actions).toEqual([{ kind: "record", ids, joinExisting: true, done: ["disk-swap"] }]);
    expect(plan.requests).toEqual({ "disk-swap": "Done" });
    expect(plan.moving).toBe(false);
    // As recorded: nothing to write.
    const again = planEtcdMembers(input({ requests: [ask("disk-swap", "etcd-1")], done: ["disk-swap"] }));
    expect(again.actions).toEqual([]);
  });

  it("a member due for repair goes first; the requests wait, in name order, one at a time", () => {
    const members = [member("etcd-0"), member("etcd-1"), down("etcd-2", NOT_READY_FOR)];
    const requests = [ask("z-last", "etcd-0"), ask("a-first", "etcd-1")];
    const repair = planEtcdMembers(input({ members, requests }));
    expect(steps(repair.actions)).toEqual(["remove etcd-2 a2 via etcd-0,etcd-1"]);
    expect(carried(repair.actions)).toEqual([undefined]);
    expect(repair.requests).toEqual({ "a-first": "Waiting", "z-last": "Waiting" });
    const next = planEtcdMembers(input({ requests }));
    expect(steps(next.actions)).toEqual(["remove etcd-1 a1 via etcd-0,etcd-2"]);
    expect(carried(next.actions)).toEqual(["a-first"]);
    expect(next.requests).toEqual({ "a-first": "Replacing", "z-last": "Waiting" });
  });

  it("a member due for repair that a request names carries the request", () => {
    const members = [member("etcd-0"), down("etcd-1", NOT_READY_FOR), member("etcd-2")];
    const plan = planEtcdMembers(input({ members, requests: [ask("disk-swap", "etcd-1")] }));
    expect(carried(plan.actions)).toEqual(["disk-swap"]);
  });

  it("a replacement taken up from its Jobs adds the member back for its request", () => {
    const replacement: ReplacementView = {
      member: "etcd-1",
      id: "a1",
      remove: "Complete",
      request: "disk-swap",
    };
    const members = [member("etcd-0"), down("etcd-1", 1000), member("etcd-2")];
    const plan = planEtcdMembers(input({ members, replacement, requests: [ask("disk-swap", "etcd-1")] }));
    expect(steps(plan.actions)).toEqual(["add etcd-1 a1 via etcd-0,etcd-2"]);
    expect(carried(plan.actions)).toEqual(["disk-swap"]);
  });

  it("records every request for the member as done before its Jobs go", () => {
    const replacement: ReplacementView = {
      ...{ member: "etcd-1", id: "a1", remove: "Complete", add: "Complete" },
      ...{ wipedPod: "uid-old", request: "disk-swap" },
    };
    const members = [member("etcd-0"), member("etcd-1", { podUid: "uid-new", id: "b1" }), member("etcd-2")];
    const requests = [ask("disk-swap", "etcd-1"), ask("again", "etcd-1"), ask("other", "etcd-2")];
    const plan = planEtcdMembers(input({ members, replacement, requests }));
    expect(plan.actions.map((a) => a.kind)).toEqual(["record", "finish"]);
    expect(plan.actions[0]).toMatchObject({ kind: "record", done: ["again", "disk-swap"] });
    expect(plan.requests).toEqual({ again: "Done", "disk-swap": "Done", other: "Waiting" });
  });
});

// An etcd and its host acting as told: each pass, Jobs finish, a wiped member comes back Ready with a
// new ID. With `others` more members down for good, a replacement starts only while quorum holds.
interface World {
  known: Record<string, string>;
  done: string[];
  members: EtcdMemberView[];
  replacement: ReplacementView | undefined;
  removed: boolean;
  generation: number;
}

function act(world: World, action: EtcdAction, replicas: number): void {
  if (action.kind === "record") {
    world.known = { ...action.ids };
    world.done = [...action.done];
  } else if (action.kind === "remove") {
    expect(action.endpoints).not.toContain(action.member);
    expect(action.endpoints.length).toBeGreaterThanOrEqual(quorumOf(replicas));
    expect(world.replacement).toBeUndefined();
    world.replacement = { member: action.member, id: action.id, remove: "Complete" };
    world.removed = true;
  } else if (action.kind === "add")
    world.replacement = { ...(world.replacement as ReplacementView), add: "Complete" };
  else if (action.kind === "wipe") {
    world.replacement = { ...(world.replacement as ReplacementView), wipedPod: action.podUid };
    world.generation++;
    const fresh = member(action.member, { podUid: `new-${world.generation}`, id: `b${world.generation}` });
    world.members = world.members.map((m) => (m.name === action.member ? fresh : m));
  } else world.replacement = undefined;
}

function simulate(
  replicas: 3 | 5,
  lost: string,
  stuck: ReadonlySet<string>,
  notReadyForMs: number,
  request?: string,
): World {
  const names = Array.from({ length: replicas }, (_, i) => `etcd-${i}`);
  const known = Object.fromEntries(names.map((n, i) => [n, `a${i}`]));
  // Asked for by a request, the member is Ready: it is replaced for the request alone.
  const downAtStart = (n: string) => (n === lost && request === undefined) || stuck.has(n);
  const world: World = {
    known,
    done: [],
    members: names.map((n) => (downAtStart(n) ? down(n, 0) : member(n, { id: known[n] }))),
    replacement: undefined,
    removed: false,
    generation: 0,
  };
  // Until the replacement ended (for a request, five passes more, none of which may start another).
  let settled = 0;
  for (let pass = 0; pass < 400; pass++) {
    if (world.removed && world.replacement === undefined) settled++;
    if (settled > (request ? 5 : 0)) break;
    const plan = planEtcdMembers({
      etcd: { name: "etcd", replicas, repair: { enabled: true, notReadyForMs } },
      members: world.members.map((m) => (m.ready !== "True" ? { ...m, readySince: NOW } : m)),
      knownIds: world.known,
      joinExisting: true,
      replacement: world.replacement,
      requests: request ? [{ name: request, member: lost }] : [],
      done: world.done,
      now: NOW + pass * 5 * SECOND,
    });
    for (const action of plan.actions) act(world, action, replicas);
  }
  return world;
}

describe("property: a lost member is replaced only with quorum kept, and then the etcd ends whole", () => {
  it("holds for any member lost, any other members down, and any notReadyFor", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<3 | 5>(3, 5),
        fc.nat({ max: 4 }),
        fc.nat({ max: 2 }),
        fc.integer({ min: 10, max: 600 }),
        (replicas, pick, others, notReadySeconds) => {
          const names = Array.from({ length: replicas }, (_, i) => `etcd-${i}`);
          const lost = names[pick % replicas] as string;
          const stuck = new Set(names.filter((n) => n !== lost).slice(0, others));
          const world = simulate(replicas, lost, stuck, notReadySeconds * SECOND);
          const canReplace = replicas - 1 - others >= quorumOf(replicas);
          expect(world.removed).toBe(canReplace);
          expect(world.replacement).toBeUndefined();
          expect(world.generation).toBe(canReplace ? 1 : 0);
          if (canReplace)
            expect(world.members.filter((m) => m.ready === "True")).toHaveLength(replicas - others);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("holds for a Ready member an EtcdMemberReplacement names: replaced once, and recorded as done", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<3 | 5>(3, 5),
        fc.nat({ max: 4 }),
        fc.nat({ max: 2 }),
        (replicas, pick, others) => {
          const names = Array.from({ length: replicas }, (_, i) => `etcd-${i}`);
          const asked = names[pick % replicas] as string;
          const stuck = new Set(names.filter((n) => n !== asked).slice(0, others));
          // notReadyFor long enough that the stuck members are never due themselves.
          const world = simulate(replicas, asked, stuck, 3_600_000, "disk-swap");
          const canReplace = replicas - 1 - others >= quorumOf(replicas);
          expect(world.generation).toBe(canReplace ? 1 : 0);
          expect(world.done).toEqual(canReplace ? ["disk-swap"] : []);
          expect(world.replacement).toBeUndefined();
        },
      ),
      { numRuns: 200 },
    );
  });
});
