import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { deliverSlack, deliverWebhook } from "../../src/notify/deliveries.js";
import { SinkQueue } from "../../src/notify/sink-queue.js";
import type { FleetEvent } from "../../src/observe/fleet-events.js";

const event = (n: number): FleetEvent => ({
  id: `${"c".repeat(40)}/failover/${n}`,
  type: "failover",
  time: "2026-12-01T10:00:00.000Z",
  summary: `failover <${n}> & more`,
  statusCommit: "c".repeat(40),
});

describe("a sink's queue", () => {
  it("keeps at most its bound while the sink is down, dropping the oldest waiting, never the one in flight", async () => {
    let up = false;
    const taken: string[] = [];
    const given: string[] = [];
    const queue = new SinkQueue({
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
    const queue = new SinkQueue({
      deliver: async (e) =>
        e.id.endsWith("/1") ? { kind: "failed", reason: "HTTP 404" } : { kind: "delivered" },
    });
    queue.add(event(1));
    queue.add(event(2));
    await queue.idle();
    expect([queue.failed, queue.delivered]).toEqual([1, 1]);
  });
});

describe("deliveries", () => {
  it.each([
    [200, "delivered"],
    [204, "delivered"],
    [400, "failed"],
    [404, "failed"],
    [408, "retry"],
    [429, "retry"],
    [500, "retry"],
    [503, "retry"],
  ])("takes HTTP %i as %s", async (status, kind) => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        bodies.push(body);
        res.writeHead(status);
        res.end("x".repeat(200_000));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    expect((await deliverWebhook(url, undefined, event(1))).kind).toBe(kind);
    expect((await deliverSlack(url, event(7))).kind).toBe(kind);
    expect(JSON.parse(bodies[1] as string)).toEqual({
      text: `gitfleet failover: failover &lt;7&gt; &amp; more (status commit ${"c".repeat(12)})`,
    });
    await new Promise((resolve) => server.close(resolve));
  });

  it("tries again when the receiver cannot be reached", async () => {
    const outcome = await deliverWebhook("http://127.0.0.1:9/", "k", event(1));
    expect(outcome.kind).toBe("retry");
  });
});
