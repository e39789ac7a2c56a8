import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";

/**
 * L5 (security audit): a simulated member's fault endpoint took cross-origin "simple" POSTs, so any
 * web page the demo's user opened could take members down. A POST from another site is refused;
 * curl (no Origin) still works, as the README shows.
 */

let member: SimulatedMember;
beforeEach(async () => {
  member = await startMember({ name: "east" });
});
afterEach(() => member.close());

const post = (headers: Record<string, string>) =>
  fetch(`${member.url}/_gitfleet/faults`, { method: "POST", headers, body: '{"errorFraction":0.5}' });

describe("L5: the faults endpoint", () => {
  it.each([
    [
      "a cross-origin text/plain POST (the audit's)",
      { "content-type": "text/plain", origin: "http://evil.example" },
    ],
    ["a cross-site fetch", { "content-type": "application/json", "sec-fetch-site": "cross-site" }],
    ["an origin on another port", { "content-type": "application/json", origin: "http://127.0.0.1:1" }],
  ])("refuses %s", async (_name, headers) => {
    expect((await post(headers)).status).toBe(403);
    expect(member.faults.errorFraction).toBe(0);
  });

  it("takes curl's POST (form content type, no Origin)", async () => {
    expect((await post({ "content-type": "application/x-www-form-urlencoded" })).status).toBe(200);
    expect(member.faults.errorFraction).toBe(0.5);
  });
});
