import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { LeaderElector, type LeaseApi } from "../../src/kube/leader-election.js";
import { MemberApiError } from "../../src/kube/member-client.js";
import { createLogger } from "../../src/log/logger.js";

/**
 * The election's safety, as a property: whatever the latency of each request — answers that take
 * longer than the lease, partitions that end — no two candidates ever count themselves leading at the
 * same moment. The candidates are the real LeaderElector; time is vitest's fake clock, and the Lease
 * lives in an in-memory store with the API server's compare-and-swap on resourceVersion (the real
 * API server is in leader-election.test.ts and the second tier). Requests take effect when they
 * land, after their latency, as over a network. (With a renew deadline longer than the lease — the
 * mistake `timingsProblem` refuses — this property fails at once: two leaders.)
 */
const TIMINGS = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };
const logger = createLogger({ level: "silent" });

// One Lease, as the API server keeps it: a version bumped on every write, 409 on a stale one.
class LeaseStore {
  private object: JsonMap | undefined;
  private version = 0;

  get(): JsonMap {
    if (!this.object) throw new MemberApiError("management", 404, "NotFound", 'leases "gitfleet" not found');
    return structuredClone(this.object);
  }

  write(method: string, body: JsonMap): JsonMap {
    const metadata = (body.metadata ?? {}) as JsonMap;
    if (method === "POST" && this.object)
      throw new MemberApiError("management", 409, "AlreadyExists", "already exists");
    if (method === "PUT" && String(metadata.resourceVersion) !== String(this.version))
      throw new MemberApiError("management", 409, "Conflict", "the object has been modified");
    if (method === "PATCH") {
      if (!this.object) throw new MemberApiError("management", 404, "NotFound", "not found");
      const annotations = ((body.metadata as JsonMap | undefined)?.annotations ?? {}) as JsonMap;
      const current = (this.object.metadata ?? {}) as JsonMap;
      body = { ...this.object, metadata: { ...current, annotations } };
    }
    this.version++;
    this.object = {
      ...body,
      metadata: { ...((body.metadata ?? {}) as JsonMap), resourceVersion: String(this.version) },
    };
    return structuredClone(this.object);
  }
}

// A candidate's connection: each request lands after the next latency of its script (then cycles).
function connection(store: LeaseStore, latencies: readonly number[]): LeaseApi {
  let n = 0;
  return {
    raw(method: string, _path: string, body?: unknown) {
      const latency = latencies[n++ % latencies.length] ?? 0;
      return new Promise((resolve, reject) =>
        setTimeout(() => {
          try {
            resolve(method === "GET" ? store.get() : store.write(method, body as JsonMap));
          } catch (error) {
            reject(error);
          }
        }, latency),
      );
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("leader election, whatever the network does", () => {
  it("never has two candidates counting themselves leading at once", async () => {
    vi.useFakeTimers({ now: new Date("2026-12-02T10:00:00Z") });
    // Latencies up to 2.5 s: longer than the renew deadline and the lease, as a partition is.
    const latency = fc.oneof(fc.integer({ min: 0, max: 150 }), fc.integer({ min: 150, max: 2500 }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(latency, { minLength: 1, maxLength: 12 }), { minLength: 2, maxLength: 4 }),
        async (scripts) => {
          const store = new LeaseStore();
          const electors = scripts.map(
            (latencies, i) =>
              new LeaderElector({
                ...TIMINGS,
                api: connection(store, latencies),
                namespace: "gitfleet-system",
                name: "gitfleet",
                identity: `candidate-${i}`,
                logger,
                monotonicMs: () => Date.now(),
              }),
          );
          let led = 0;
          const runs = electors.map((elector) =>
            elector.run({ started: () => led++, stopped: () => undefined }),
          );
          for (let t = 0; t < 20_000; t += 10) {
            await vi.advanceTimersByTimeAsync(10);
            const leading = electors.filter((e) => e.leading).length;
            expect(leading).toBeLessThanOrEqual(1);
          }
          for (const elector of electors) elector.stop();
          await vi.advanceTimersByTimeAsync(5000);
          await Promise.all(runs);
          // Someone led at some point unless every request was slow (a partition throughout).
          return led > 0 || scripts.every((s) => s.every((ms) => ms >= 150));
        },
      ),
      { numRuns: 100 },
    );
  }, 120_000);
});
