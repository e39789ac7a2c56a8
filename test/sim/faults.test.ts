import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";

/** Injected faults, seen from a client over HTTP. */
let member: SimulatedMember;
beforeAll(async () => {
  member = await startMember({ name: "flaky" });
});
afterAll(() => member.close());

describe("fault injection", () => {
  it("answers health probes, then refuses connections while down, and answers on the same port once up", async () => {
    expect(await (await fetch(`${member.url}/readyz`)).text()).toBe("ok");
    await member.faults.down();
    await expect(fetch(`${member.url}/readyz`)).rejects.toMatchObject({ cause: { code: "ECONNREFUSED" } });
    await member.faults.up();
    expect((await fetch(`${member.url}/api/v1/namespaces`)).status).toBe(200);
  });

  it("fails the given fraction of requests with 500, and answers too slowly for a client with a deadline", async () => {
    member.faults.errorFraction = 0.25;
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await fetch(`${member.url}/api/v1/namespaces`)).status);
    expect(statuses.filter((s) => s === 500)).toHaveLength(5);
    expect(statuses.filter((s) => s === 200)).toHaveLength(15);
    member.faults.errorFraction = 0;
    // A slow member makes a client with a deadline give up, as gitfleet's per-cluster timeouts will.
    member.faults.delayMs = 5_000;
    await expect(fetch(`${member.url}/version`, { signal: AbortSignal.timeout(100) })).rejects.toMatchObject({
      name: "TimeoutError",
    });
    member.faults.delayMs = 0;
    expect((await fetch(`${member.url}/version`)).status).toBe(200);
  });

  it("takes faults over HTTP from outside the process, and is never slowed or failed itself", async () => {
    const control = (body: object) =>
      fetch(`${member.url}/_gitfleet/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect(await (await control({ errorFraction: 1, delayMs: 0 })).json()).toEqual({
      delayMs: 0,
      errorFraction: 1,
      lostNodes: [],
    });
    expect((await fetch(`${member.url}/api/v1/namespaces`)).status).toBe(500);
    expect((await control({ errorFraction: 0 })).status).toBe(200);
    expect((await fetch(`${member.url}/api/v1/namespaces`)).status).toBe(200);
    // This member runs no nodes: losing some is refused, with the reason.
    const refused = await control({ loseNodes: 1 });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toBe(
      "member flaky runs no nodes: start it with a world",
    );
    // A 3 s outage: polled until a connection is refused (no fixed head start), then until it is back.
    expect((await control({ downForSeconds: 3 })).status).toBe(202);
    // (A connection open when it went down is cut, "other side closed", before new ones are refused.)
    const codeOf = (error: unknown) => (error as { cause?: { code?: string } }).cause?.code;
    let down: string | undefined;
    for (let i = 0; i < 150 && down !== "ECONNREFUSED"; i++) {
      down = await fetch(`${member.url}/version`).then(() => undefined, codeOf);
      if (down !== "ECONNREFUSED") await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(down).toBe("ECONNREFUSED");
    for (let i = 0; i < 100; i++) {
      const back = await fetch(`${member.url}/version`).then(
        (r) => r.status,
        () => 0,
      );
      if (back === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the member did not come back");
  });
});

describe("a timed outage", () => {
  it("does not reopen a member that was closed before it ended (a process stopping is not kept alive)", async () => {
    const short = await startMember({ name: "short" });
    const response = await fetch(`${short.url}/_gitfleet/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ downForSeconds: 0.3 }),
    });
    expect(response.status).toBe(202);
    // Fixed waits on purpose: closed during its outage, it must still be closed after the outage
    // would have ended (0.3 s) — a check that nothing happens, which no condition can poll for.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await short.close();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await expect(fetch(`${short.url}/version`)).rejects.toMatchObject({ cause: { code: "ECONNREFUSED" } });
  });
});
