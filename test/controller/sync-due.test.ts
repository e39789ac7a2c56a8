import { describe, expect, it } from "vitest";
import { onlyRenderChanged, type SyncRequest, syncDue } from "../../src/controller/sync-target.js";

// When the members are asked again, and when for the new render alone (only changed apps synced).

const RESYNC = 60_000;
const times = (extra: { progressAt?: number; windowOpens?: number } = {}) => ({
  resyncIntervalMs: RESYNC,
  progressAt: extra.progressAt,
  windowOpens: extra.windowOpens,
});
const renderA = { render: "a" };
const renderB = { render: "b" };
const last: SyncRequest = { render: renderA, key: "k", at: 1_000 };

describe("a due sync", () => {
  const cases: [string, SyncRequest | undefined, SyncRequest, ReturnType<typeof times>, boolean, boolean][] =
    [
      ["the first", undefined, { render: renderA, key: "k", at: 1_000 }, times(), true, false],
      ["nothing changed", last, { render: renderA, key: "k", at: 2_000 }, times(), false, false],
      ["a new render", last, { render: renderB, key: "k", at: 2_000 }, times(), true, true],
      ["a new render and gates moved", last, { render: renderB, key: "k2", at: 2_000 }, times(), true, false],
      ["gates moved", last, { render: renderA, key: "k2", at: 2_000 }, times(), true, false],
      // The resync interval: just below, at and above it.
      [
        "a new render just before the resync",
        last,
        { render: renderB, key: "k", at: 1_000 + RESYNC - 1 },
        times(),
        true,
        true,
      ],
      [
        "a new render at the resync",
        last,
        { render: renderB, key: "k", at: 1_000 + RESYNC },
        times(),
        true,
        false,
      ],
      ["the resync alone", last, { render: renderA, key: "k", at: 1_000 + RESYNC + 1 }, times(), true, false],
      // A progress check or a window opening at the same time needs everything compared.
      [
        "a new render when progress is checked",
        last,
        { render: renderB, key: "k", at: 2_000 },
        times({ progressAt: 2_000 }),
        true,
        false,
      ],
      [
        "a new render before the progress check",
        last,
        { render: renderB, key: "k", at: 2_000 },
        times({ progressAt: 2_001 }),
        true,
        true,
      ],
      [
        "a new render as a window opens",
        last,
        { render: renderB, key: "k", at: 2_000 },
        times({ windowOpens: 2_000 }),
        true,
        false,
      ],
    ];
  it.each(cases)("%s: due %s, for the render alone %s", (_, before, next, t, due, alone) => {
    expect(syncDue(before, next, t)).toBe(due);
    expect(onlyRenderChanged(before, next, t)).toBe(alone);
  });
});
