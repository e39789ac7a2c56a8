import { describe, expect, it } from "vitest";
import { explainInvalidCron } from "../../src/model/cron.js";

describe("cron schedules", () => {
  it.each([
    "* * * * *",
    "0 8 * * 1-5",
    "*/15 * * * *",
    "30 11 * * MON-FRI",
    "0 0 1 jan,jul *",
    "0 0 * * 7",
    "5,10,15 0-6/2 1-31 1-12 0-6",
    "@daily",
    "@hourly",
  ])("%s is valid", (schedule) => {
    expect(explainInvalidCron(schedule)).toBeUndefined();
  });

  it.each([
    ["* * * *", "expected 5 fields (minute hour day-of-month month day-of-week), got 4"],
    ["60 * * * *", 'minute: "60" is not in 0-59'],
    ["0 24 * * *", 'hour: "24" is not in 0-23'],
    ["0 0 0 * *", 'day of month: "0" is not in 1-31'],
    ["0 0 * 13 *", 'month: "13" is not in 1-12'],
    ["0 0 * * 8", 'day of week: "8" is not in 0-7'],
    ["*/0 * * * *", 'minute: invalid step in "*/0"'],
    ["5-1 * * * *", 'minute: range "5-1" runs backwards'],
    ["0 0 * * funday", 'day of week: "funday" is not in 0-7'],
    ["@sometimes", "expected 5 fields (minute hour day-of-month month day-of-week), got 1"],
  ])("%s is invalid: %s", (schedule, reason) => {
    expect(explainInvalidCron(schedule)).toBe(reason);
  });
});
