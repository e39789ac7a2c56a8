import { describe, expect, it } from "vitest";
import type { SyncWindowSpec } from "../../src/model/types.js";
import { windowOpen, windowVerdict } from "../../src/sync/sync-windows.js";

const at = (iso: string) => Date.parse(iso);

// Weekdays 09:00–17:00 in Berlin (UTC+1 in December): 08:00–16:00 UTC.
const BUSINESS: SyncWindowSpec = {
  name: "business-hours",
  kind: "deny",
  schedule: "0 9 * * 1-5",
  duration: "8h",
  timeZone: "Europe/Berlin",
};
// Changes only at night, 22:00–02:00 UTC.
const NIGHTS: SyncWindowSpec = { name: "nights", kind: "allow", schedule: "0 22 * * *", duration: "4h" };

describe("sync windows", () => {
  // 2026-12-03 is a Thursday; 2026-12-05 a Saturday.
  const cases: [string, SyncWindowSpec[], string, string, boolean, string?][] = [
    ["no window: always open", [], "web", "2026-12-03T10:00:00Z", true],
    [
      "inside a deny window (Berlin time)",
      [BUSINESS],
      "web",
      "2026-12-03T10:00:00Z",
      false,
      "2026-12-03T16:00:00.000Z",
    ],
    ["before it opens", [BUSINESS], "web", "2026-12-03T07:59:59Z", true],
    ["at its end", [BUSINESS], "web", "2026-12-03T16:00:00Z", true],
    ["on a weekend", [BUSINESS], "web", "2026-12-05T10:00:00Z", true],
    [
      "Friday's window ends Friday",
      [BUSINESS],
      "web",
      "2026-12-04T15:00:00Z",
      false,
      "2026-12-04T16:00:00.000Z",
    ],
    [
      "outside an allow window: waits for it",
      [NIGHTS],
      "web",
      "2026-12-03T12:00:00Z",
      false,
      "2026-12-03T22:00:00.000Z",
    ],
    ["inside an allow window, across midnight", [NIGHTS], "web", "2026-12-04T01:30:00Z", true],
    [
      "deny wins inside an allow window; opens when the deny ends",
      [NIGHTS, { name: "maintenance", kind: "deny", schedule: "30 21 3 12 *", duration: "2h" }],
      "web",
      "2026-12-03T22:30:00Z",
      false,
      "2026-12-03T23:30:00.000Z",
    ],
    [
      "overlapping deny windows: open only when both end",
      [
        { kind: "deny", schedule: "0 8 * * *", duration: "2h" },
        { kind: "deny", schedule: "0 9 * * *", duration: "3h" },
      ],
      "web",
      "2026-12-03T08:30:00Z",
      false,
      "2026-12-03T12:00:00.000Z",
    ],
    [
      "an app the window does not name",
      [{ ...BUSINESS, apps: ["shop-*"] }],
      "web",
      "2026-12-03T10:00:00Z",
      true,
    ],
    [
      "an app a pattern names",
      [{ ...BUSINESS, apps: ["shop-*"] }],
      "shop-api",
      "2026-12-03T10:00:00Z",
      false,
      "2026-12-03T16:00:00.000Z",
    ],
  ];
  it.each(cases)("%s", (_name, windows, app, now, open, opensAt) => {
    const verdict = windowVerdict(windows, app, "east", at(now));
    expect(verdict.open).toBe(open);
    if (!verdict.open)
      expect(verdict.opensAt === undefined ? undefined : new Date(verdict.opensAt).toISOString()).toBe(
        opensAt,
      );
  });

  it("names the window and says until when it holds", () => {
    expect(windowVerdict([BUSINESS], "web", "east", at("2026-12-03T10:00:00Z"))).toEqual({
      open: false,
      window: "business-hours",
      reason: "deny window business-hours is open until 2026-12-03T16:00:00.000Z",
      opensAt: at("2026-12-03T16:00:00Z"),
    });
    expect(
      windowVerdict(
        [{ kind: "allow", schedule: "0 22 * * *", duration: "4h" }],
        "web",
        "east",
        at("2026-12-03T12:00:00Z"),
      ),
    ).toMatchObject({
      reason: "outside allow window allow-0",
    });
  });

  it("applies to the clusters it names only", () => {
    const window = { ...BUSINESS, clusters: ["idc-*"] };
    expect(windowVerdict([window], "web", "idc-east-1", at("2026-12-03T10:00:00Z")).open).toBe(false);
    expect(windowVerdict([window], "web", "aws-use1", at("2026-12-03T10:00:00Z")).open).toBe(true);
  });

  it("never blocks failover unless the window says blockFailover", () => {
    const now = at("2026-12-03T10:00:00Z");
    expect(windowVerdict([BUSINESS], "web", "east", now, true).open).toBe(true);
    expect(windowVerdict([{ ...BUSINESS, blockFailover: true }], "web", "east", now, true).open).toBe(false);
    expect(windowVerdict([NIGHTS], "web", "east", at("2026-12-03T12:00:00Z"), true).open).toBe(true);
  });

  it("reads a window as closed when its schedule cannot be read (validation refuses it first)", () => {
    expect(windowOpen({ kind: "deny", schedule: "not cron", duration: "1h" }, Date.now())).toBe(false);
  });
});
