import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { deliverSlack, deliverWebhook } from "../../src/notify/deliveries.js";
import { failoverEvent } from "../helpers/fleet-event.js";

const event = failoverEvent;

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
