/**
 * Checks five-field cron schedules (minute hour day-of-month month day-of-week) and the common
 * @-macros, as Kubernetes CronJobs and Karmada's CronFederatedHPA accept them. Returns why a schedule
 * is invalid, or undefined when it is valid.
 */
const MACROS = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]);
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

interface CronField {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const FIELDS: readonly CronField[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: MONTHS },
  { name: "day of week", min: 0, max: 7, names: DAYS },
];

/** Why `schedule` is not a valid cron schedule, or undefined when it is. */
export function explainInvalidCron(schedule: string): string | undefined {
  const trimmed = schedule.trim();
  if (MACROS.has(trimmed)) return undefined;
  const parts = trimmed.split(/\s+/);
  if (parts.length !== 5)
    return `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`;
  for (const [i, field] of FIELDS.entries()) {
    const reason = explainInvalidField(parts[i] ?? "", field);
    if (reason) return reason;
  }
  return explainImpossibleDate(parts[2] ?? "*", parts[3] ?? "*");
}

// Days each month can have (February in a leap year).
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

// A schedule whose days of month exist in none of its months ("0 0 30 2 *") never runs; cron
// libraries refuse it when they compute the next run, so it is refused here, before merge.
function explainImpossibleDate(days: string, months: string): string | undefined {
  const daySet = expandField(days, FIELDS[2] as CronField);
  const monthSet = expandField(months, FIELDS[3] as CronField);
  const longest = Math.max(...[...monthSet].map((m) => MONTH_DAYS[m - 1] ?? 31));
  const first = Math.min(...daySet);
  return first > longest
    ? `day of month: no month in the schedule has a day ${first} (the longest has ${longest})`
    : undefined;
}

// The values a valid field takes.
function expandField(text: string, field: CronField): Set<number> {
  const values = new Set<number>();
  for (const item of text.split(",")) {
    const [range = "", step = "1"] = item.split("/");
    const [from, to] =
      range === "*" || range === "?"
        ? [field.min, field.max]
        : ((bounds) => [bounds[0] ?? field.min, bounds[1] ?? (step === "1" ? bounds[0] : field.max)])(
            range.split("-").map((b) => cronValue(b, field)),
          );
    for (let v = from ?? field.min; v <= (to ?? field.max); v += Number(step)) values.add(v);
  }
  return values;
}

function explainInvalidField(text: string, field: CronField): string | undefined {
  for (const item of text.split(",")) {
    const [range = "", step, extra] = item.split("/");
    if (extra !== undefined || (step !== undefined && !/^[1-9][0-9]*$/.test(step))) {
      return `${field.name}: invalid step in "${item}"`;
    }
    if (range === "*" || range === "?") continue;
    const bounds = range.split("-");
    if (bounds.length > 2) return `${field.name}: invalid range "${range}"`;
    const values = bounds.map((b) => cronValue(b, field)).filter((v): v is number => v !== undefined);
    if (values.length !== bounds.length)
      return `${field.name}: "${range}" is not in ${field.min}-${field.max}`;
    const [from = 0, to = from] = values;
    if (from > to) return `${field.name}: range "${range}" runs backwards`;
  }
  return undefined;
}

function cronValue(text: string, field: CronField): number | undefined {
  const named = field.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (field.min === 1 ? 1 : 0);
  if (!/^[0-9]+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= field.min && value <= field.max ? value : undefined;
}
