import { describe, expect, it } from "vitest";
import type { FleetEvent } from "../../src/observe/fleet-events.js";
import { DeliveryQueue } from "../../src/util/delivery-queue.js";
import { failoverEvent } from "../helpers/fleet-event.js";

const event = failoverEvent;

describe("a delivery queue", () => {
  it("keeps at most its bound while the sink is down, dropping the oldest waiting, never the one in flight", async () => {
    let up = false;
    const taken: string[] = [];
    const given: string[] = [];
    const queue = new DeliveryQueue<FleetEvent>({
      maxBacklog: 3,
      backoffMs: 5,
      maxBackoffMs: 20,
      deliver: async (e) => {
        if (!up) return { kind: "retry", reason: "HTTP 503" };
        taken.push(e.id);
        return { kind: "delivered" };
      },
      onGiveUp: (e, reason) => given.push(`${e.id.split("/")[2]}: ${reason}`),
    });
    for (let n = 1; n <= 6; n++) queue.add(event(n));
    expect(queue.backlog).toBe(3);
    expect(queue.dropped).toBe(3);
    expect(given).toEqual(["2: the backlog is full", "3: the backlog is full", "4: the backlog is full"]);
    up = true;
    await queue.idle();
    expect(taken.map((id) => id.split("/")[2])).toEqual(["1", "5", "6"]);
    expect(queue.backlog).toBe(0);
  });

  it("gives up on an answer that will not change, and goes on with the next", async () => {
    const queue = new DeliveryQueue<FleetEvent>({
      deliver: async (e) =>
        e.id.endsWith("/1") ? { kind: "failed", reason: "HTTP 404" } : { kind: "delivered" },
    });
    queue.add(event(1));
    queue.add(event(2));
    await queue.idle();
    expect([queue.failed, queue.delivered]).toEqual([1, 1]);
  });

  it("keeps one item per key waiting: a newer one replaces the older where it stands, never the one in flight", async () => {
    let up = false;
    const taken: string[] = [];
    const queue = new DeliveryQueue<{ sha: string; state: string }>({
      backoffMs: 5,
      key: (status) => status.sha,
      deliver: async (status) => {
        if (!up) return { kind: "retry", reason: "HTTP 503" };
        taken.push(`${status.sha} ${status.state}`);
        return { kind: "delivered" };
      },
    });
    queue.add({ sha: "a", state: "pending" });
    queue.add({ sha: "a", state: "success" });
    queue.add({ sha: "b", state: "pending" });
    queue.add({ sha: "a", state: "failure" });
    queue.add({ sha: "b", state: "success" });
    expect(queue.backlog).toBe(3);
    expect(queue.latest("a")).toEqual({ sha: "a", state: "failure" });
    expect(queue.latest("c")).toBeUndefined();
    up = true;
    await queue.idle();
    expect(taken).toEqual(["a pending", "a failure", "b success"]);
  });
});
