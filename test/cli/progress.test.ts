import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { progressFor, reconcileProgress, syncProgress } from "../../src/cli/progress.js";
import { createLogger } from "../../src/log/logger.js";

/** A logger writing JSON records into an array. */
function capturedLogger() {
  const records: Record<string, unknown>[] = [];
  const logger = createLogger({
    destination: { write: (line: string) => records.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, records };
}

/** A stream that says it is a terminal and keeps what was written. */
function terminal() {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    }),
    { isTTY: true, columns: 100, cursorTo: () => true, clearLine: () => true, moveCursor: () => true },
  );
  return { stream, text: () => chunks.join("") };
}

describe("progress output", () => {
  it("is a log record at the start, at each quarter and at the end when not on a terminal", () => {
    const { logger, records } = capturedLogger();
    const progress = progressFor({ stream: new Writable({ write: (_c, _e, done) => done() }), logger });
    const task = progress.task("sync east", 100);
    for (let done = 1; done < 100; done++) task.update(done, "objects");
    task.finish("100 objects");
    expect(records.map((r) => [r.msg, r.done, r.total])).toEqual([
      ["sync east: started", 0, 100],
      ["sync east: 25/100", 25, 100],
      ["sync east: 50/100", 50, 100],
      ["sync east: 75/100", 75, 100],
      ["sync east: done", 100, 100],
    ]);
  });

  it("draws bars on a terminal and writes no log record", () => {
    const { logger, records } = capturedLogger();
    const { stream, text } = terminal();
    const progress = progressFor({ stream, logger });
    const report = syncProgress(progress);
    for (let done = 1; done <= 8; done++) report("east", done, 8);
    progress.stop();
    expect(records).toEqual([]);
    expect(text()).toContain("sync east [");
    expect(text()).toContain("8/8 8 objects");
  });

  it("shows the first reconcile's stages and each cluster's first sync only", () => {
    const { logger, records } = capturedLogger();
    const progress = progressFor({ stream: new Writable({ write: (_c, _e, done) => done() }), logger });
    const stage = reconcileProgress(progress);
    for (const name of ["fetch", "restore", "read", "reconcile", "write", "publish", "fetch", "restore"])
      stage(name);
    const sync = syncProgress(progress);
    for (let round = 0; round < 2; round++) for (let done = 1; done <= 4; done++) sync("west", done, 4);
    expect(records.filter((r) => r.task === "reconcile").map((r) => r.msg)).toEqual([
      "reconcile: started",
      "reconcile: 2/6",
      "reconcile: 3/6",
      "reconcile: 5/6",
      "reconcile: done",
    ]);
    // The second round (a resync) adds nothing.
    expect(records.filter((r) => r.task === "sync west").map((r) => r.msg)).toEqual([
      "sync west: started",
      "sync west: 1/4",
      "sync west: 2/4",
      "sync west: 3/4",
      "sync west: done",
    ]);
  });
});
