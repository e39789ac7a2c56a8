import { CronExpressionParser } from "cron-parser";
import type { CronScale, CronScaleRule } from "../model/types.js";

// Which CronScale rule applies now: each rule's schedule (five-field cron, in its time zone) is
// read with cron-parser; a rule is due when it fired since it was last executed. Several due at once
// (the controller was down across their times) → only the latest is applied, the others are
// recorded as superseded, as a person catching up by hand would do. Pure: the execution history is
// an input and an output, kept in the status branch, so a restarted controller applies a rule it
// missed exactly once.

/** One rule's last execution, as status records it. */
export interface RuleRecord {
  readonly rule: string;
  /** When it fired (the schedule's time, ms). */
  readonly firedAt: number;
  readonly outcome: "applied" | "superseded";
  /** For superseded: the rule applied instead. */
  readonly by?: string;
}

export interface CronScaleHistory {
  /** When gitfleet began to follow this CronScale (ms): fires before it are not due. */
  readonly since: number;
  /** The newest record of each rule. */
  readonly rules: readonly RuleRecord[];
}

export interface CronStep {
  /** The rule to apply now, with when it fired. */
  readonly apply?: { readonly rule: CronScaleRule; readonly firedAt: number };
  readonly history: CronScaleHistory;
  /** Each rule's next fire after now (ms), for the wake-up timer. */
  readonly nextAt: number | undefined;
  /** Rules whose schedule or time zone cannot be read: name and why. */
  readonly invalid: readonly { readonly rule: string; readonly error: string }[];
}

/** One evaluation at `now` (ms). `history` undefined: first sight, nothing before now is due. */
export function dueCronRule(
  cronScale: CronScale,
  history: CronScaleHistory | undefined,
  now: number,
): CronStep {
  const since = history?.since ?? now;
  const records = new Map((history?.rules ?? []).map((r) => [r.rule, r]));
  const { due, invalid, nexts } = evaluate(cronScale.spec.rules, records, since, now);
  const latest = due.reduce<(typeof due)[number] | undefined>(
    (best, d) =>
      !best || d.firedAt > best.firedAt || (d.firedAt === best.firedAt && d.rule.name > best.rule.name)
        ? d
        : best,
    undefined,
  );
  for (const d of due)
    records.set(
      d.rule.name,
      d === latest
        ? { rule: d.rule.name, firedAt: d.firedAt, outcome: "applied" }
        : { rule: d.rule.name, firedAt: d.firedAt, outcome: "superseded", by: latest?.rule.name ?? "" },
    );
  return {
    ...(latest ? { apply: latest } : {}),
    history: { since, rules: [...records.values()].sort((a, b) => (a.rule < b.rule ? -1 : 1)) },
    nextAt: nexts.length > 0 ? Math.min(...nexts) : undefined,
    invalid,
  };
}

// Each rule's latest fire since it was last executed (if any), its next fire, or why it cannot be read.
function evaluate(
  rules: readonly CronScaleRule[],
  records: ReadonlyMap<string, RuleRecord>,
  since: number,
  now: number,
): {
  due: { rule: CronScaleRule; firedAt: number }[];
  invalid: { rule: string; error: string }[];
  nexts: number[];
} {
  const due: { rule: CronScaleRule; firedAt: number }[] = [];
  const invalid: { rule: string; error: string }[] = [];
  const nexts: number[] = [];
  for (const rule of rules) {
    const times = fireTimes(rule, now);
    if ("error" in times) {
      invalid.push({ rule: rule.name, error: times.error });
      continue;
    }
    if (times.next !== undefined) nexts.push(times.next);
    if (rule.suspend || times.previous === undefined) continue;
    const last = records.get(rule.name)?.firedAt ?? Number.NEGATIVE_INFINITY;
    if (times.previous > last && times.previous >= since) due.push({ rule, firedAt: times.previous });
  }
  return { due, invalid, nexts };
}

/** The schedule's fire at or before `now`, and its next after `now`. */
function fireTimes(
  rule: CronScaleRule,
  now: number,
): { previous?: number; next?: number } | { error: string } {
  try {
    const options = { currentDate: now + 1, ...(rule.timeZone ? { tz: rule.timeZone } : { tz: "UTC" }) };
    const previous = CronExpressionParser.parse(rule.schedule, options).prev().getTime();
    const next = CronExpressionParser.parse(rule.schedule, { ...options, currentDate: now })
      .next()
      .getTime();
    return { previous, next };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
