import { describe, expect, it } from "vitest";
import { ReconcileError, TerminalError } from "../../src/controller/errors.js";
import { ReconcileLoop } from "../../src/controller/loop.js";
import type { ReconcileReport } from "../../src/controller/reconciler.js";
import { createLogger } from "../../src/log/logger.js";

/** The loop's contract: terminal errors wait for a change, errors that may pass back off, success resets. */
const logger = createLogger({ level: "silent" });
const REPORT = {
  result: "up-to-date",
  sourceCommit: "a".repeat(40),
  valid: true,
} as unknown as ReconcileReport;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// A reconciler that answers from a script of outcomes, recording why each call came.
function scripted(outcomes: readonly (Error | "ok")[]) {
  const calls: number[] = [];
  let next = 0;
  return {
    calls,
    reconcile: async () => {
      calls.push(Date.now());
      const outcome = outcomes[Math.min(next++, outcomes.length - 1)];
      if (outcome instanceof Error) throw outcome;
      return REPORT;
    },
  };
}

describe("the reconcile loop", () => {
  it("runs nothing before it starts (a standby replica), whatever asks", async () => {
    const reconciler = scripted(["ok"]);
    const loop = new ReconcileLoop(reconciler, { intervalMs: 10, logger });
    loop.trigger("webhook:github");
    // A fixed wait: four intervals pass and nothing may run, which no condition can poll for.
    await sleep(40);
    expect(reconciler.calls).toHaveLength(0);
    loop.start();
    const deadline = Date.now() + 5000;
    while (reconciler.calls.length === 0 && Date.now() < deadline) await sleep(5);
    await loop.idle();
    expect(reconciler.calls.length).toBeGreaterThan(0);
    await loop.stop();
  });

  it("does not retry a configuration error on its timer, reports it, and reconciles when asked", async () => {
    const reconciler = scripted([new TerminalError("branch nope not found in /fleet"), "ok"]);
    const loop = new ReconcileLoop(reconciler, { intervalMs: 10, logger, backoffMs: 5 });
    loop.start();
    // A fixed wait: twelve intervals pass and no retry may come, which no condition can poll for.
    await sleep(120);
    await loop.idle();
    expect(reconciler.calls.length).toBe(1);
    expect(loop.ready).toBe(false);
    expect(loop.problem).toEqual({ kind: "terminal", message: "branch nope not found in /fleet" });
    loop.trigger("webhook");
    await loop.idle();
    expect(reconciler.calls.length).toBe(2);
    expect(loop.ready).toBe(true);
    expect(loop.problem).toBeUndefined();
    await loop.stop();
  });

  it("backs off from errors that may pass, doubling the wait up to the interval, until one succeeds", async () => {
    const moved = new ReconcileError("the status branch kept moving");
    const reconciler = scripted([moved, moved, moved, "ok"]);
    const loop = new ReconcileLoop(reconciler, { intervalMs: 60_000, logger, backoffMs: 20 });
    loop.start();
    const deadline = Date.now() + 5000;
    while (reconciler.calls.length < 4 && Date.now() < deadline) await sleep(10);
    await loop.idle();
    expect(reconciler.calls.length).toBe(4);
    const gaps = reconciler.calls.slice(1).map((at, i) => at - (reconciler.calls[i] as number));
    // 20, 40, 80 ms (timers fire no earlier than asked).
    expect(gaps[0]).toBeGreaterThanOrEqual(19);
    expect(gaps[1]).toBeGreaterThanOrEqual(39);
    expect(gaps[2]).toBeGreaterThanOrEqual(79);
    expect(loop.ready).toBe(true);
    expect(loop.problem).toBeUndefined();
    await loop.stop();
  });

  it("reports the failures it backs off from, capped at the interval", async () => {
    const reconciler = scripted([new Error("connect ECONNREFUSED")]);
    const loop = new ReconcileLoop(reconciler, { intervalMs: 30, logger, backoffMs: 20 });
    loop.start();
    const deadline = Date.now() + 5000;
    while (reconciler.calls.length < 3 && Date.now() < deadline) await sleep(5);
    await loop.stop();
    expect(loop.problem).toMatchObject({ kind: "failing", message: "connect ECONNREFUSED", retryInMs: 30 });
    expect(loop.ready).toBe(false);
  });

  it("runs the next round when a round asks for it (its requeue), and only the latest ask stands", async () => {
    const reasons: string[] = [];
    let calls = 0;
    const reconciler = {
      reconcile: async () => {
        calls++;
        // The first round asks twice as late as the second: the second's ask replaces it.
        const requeue =
          calls === 1
            ? { afterMs: 30, reason: "deadline" }
            : calls === 2
              ? { afterMs: 10, reason: "progress" }
              : undefined;
        return { ...REPORT, ...(requeue ? { requeue } : {}) };
      },
    };
    const loop = new ReconcileLoop(reconciler, {
      intervalMs: 60_000,
      logger,
      onReconcile: ({ reason }) => reasons.push(reason),
    });
    loop.start();
    const deadline = Date.now() + 5000;
    while (calls < 3 && Date.now() < deadline) await sleep(5);
    // A fixed wait past the first round's 30 ms ask: it was replaced, so no fourth round may come.
    await sleep(60);
    await loop.stop();
    expect(reasons).toEqual(["start", "deadline", "progress"]);
  });
});
