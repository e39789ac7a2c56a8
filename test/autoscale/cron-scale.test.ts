import { describe, expect, it } from "vitest";
import { type CronScaleHistory, dueCronRule } from "../../src/autoscale/cron-scale.js";
import type { CronScale, CronScaleRule } from "../../src/model/types.js";

// CronScale rules at an injected clock: due when fired since last executed; a restart after missed
// times applies only the latest; suspended and unreadable rules never apply.

const at = (iso: string) => Date.parse(iso);
const cron = (rules: CronScaleRule[]): CronScale =>
  ({
    metadata: { name: "peak", namespace: "shop" },
    spec: {
      scaleTargetRef: { apiVersion: "gitfleet.io/v1alpha1", kind: "FederatedHPA", name: "storefront-api" },
      rules,
    },
  }) as unknown as CronScale;
// The example fleet's rules: weekday lunch peak, evening floor, Berlin time.
const RULES: CronScaleRule[] = [
  { name: "lunch-peak", schedule: "30 11 * * 1-5", timeZone: "Europe/Berlin", targetMinReplicas: 20 },
  { name: "evening", schedule: "0 20 * * *", timeZone: "Europe/Berlin", targetMinReplicas: 6 },
];

describe("CronScale rules", () => {
  it("fires a rule at its time in its time zone, once", () => {
    // Monday 30 November 2026: 11:30 in Berlin is 10:30 UTC.
    const start = dueCronRule(cron(RULES), undefined, at("2026-11-30T09:00:00Z"));
    expect(start.apply).toBeUndefined();
    expect(start.nextAt).toBe(at("2026-11-30T10:30:00Z"));
    const before = dueCronRule(cron(RULES), start.history, at("2026-11-30T10:29:59Z"));
    expect(before.apply).toBeUndefined();
    const fired = dueCronRule(cron(RULES), before.history, at("2026-11-30T10:30:00Z"));
    expect(fired.apply?.rule.name).toBe("lunch-peak");
    expect(fired.apply?.firedAt).toBe(at("2026-11-30T10:30:00Z"));
    expect(fired.nextAt).toBe(at("2026-11-30T19:00:00Z"));
    // Evaluated again a minute later: not again.
    expect(dueCronRule(cron(RULES), fired.history, at("2026-11-30T10:31:00Z")).apply).toBeUndefined();
  });

  it("after missing several times while down, applies only the latest and records the others as superseded", () => {
    const history: CronScaleHistory = {
      since: at("2026-11-27T00:00:00Z"),
      rules: [{ rule: "evening", firedAt: at("2026-11-27T19:00:00Z"), outcome: "applied" }],
    };
    // Down from Friday evening to Monday 12:00 UTC: Saturday's and Sunday's evenings and Monday's
    // lunch peak were missed; the latest is Monday's lunch peak.
    const restarted = dueCronRule(cron(RULES), history, at("2026-11-30T12:00:00Z"));
    expect(restarted.apply?.rule.name).toBe("lunch-peak");
    expect(restarted.history.rules).toEqual([
      { rule: "evening", firedAt: at("2026-11-29T19:00:00Z"), outcome: "superseded", by: "lunch-peak" },
      { rule: "lunch-peak", firedAt: at("2026-11-30T10:30:00Z"), outcome: "applied" },
    ]);
    // The same history read back (a second restart) applies nothing more.
    expect(dueCronRule(cron(RULES), restarted.history, at("2026-11-30T12:05:00Z")).apply).toBeUndefined();
  });

  it("does not apply what fired before gitfleet followed the CronScale", () => {
    const first = dueCronRule(cron(RULES), undefined, at("2026-11-30T12:00:00Z"));
    expect(first.apply).toBeUndefined();
    expect(first.history.since).toBe(at("2026-11-30T12:00:00Z"));
  });

  it.each([
    ["a suspended rule", { name: "off", schedule: "* * * * *", suspend: true }, undefined],
    ["a schedule out of range", { name: "bad", schedule: "61 * * * *" }, "bad"],
    ["an unknown time zone", { name: "mars", schedule: "0 * * * *", timeZone: "Mars/Olympus" }, "mars"],
  ] as [string, CronScaleRule, string | undefined][])("never applies %s", (_name, rule, invalid) => {
    const step = dueCronRule(cron([rule]), { since: 0, rules: [] }, at("2026-11-30T12:00:30Z"));
    expect(step.apply).toBeUndefined();
    expect(step.invalid.map((i) => i.rule)).toEqual(invalid ? [invalid] : []);
  });
});
