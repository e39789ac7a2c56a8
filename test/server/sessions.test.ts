import { describe, expect, it } from "vitest";
import { cookieValue, openSession, seal, sealSession, unseal } from "../../src/server/sessions.js";

const KEY = new TextEncoder().encode("a-session-key-of-32-bytes-test!!");
const OTHER = new TextEncoder().encode("another-key-of-32-bytes-for-test");
const VIEWER = { subject: "alice", names: ["@alice", "@example-shop/games"] };
const NOW = 1_800_000_000_000;

describe("session cookies", () => {
  it("open to the viewer sealed, until they expire", () => {
    const sealed = sealSession(VIEWER, KEY, NOW + 60_000);
    expect(openSession(sealed, KEY, NOW)).toEqual(VIEWER);
    expect(openSession(sealed, KEY, NOW + 59_999)).toEqual(VIEWER);
    expect(openSession(sealed, KEY, NOW + 60_000)).toBeUndefined();
  });

  it.each([
    ["under another key", (s: string) => s, OTHER],
    [
      "with a name added",
      (s: string) => {
        const [body, tag] = s.split(".");
        const claims = JSON.parse(Buffer.from(body ?? "", "base64url").toString());
        claims.c.n.push("@example-shop/platform");
        return `${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${tag}`;
      },
      KEY,
    ],
    ["without its tag", (s: string) => s.split(".")[0] ?? "", KEY],
    ["with its tag cut", (s: string) => s.slice(0, -2), KEY],
    ["empty", () => "", KEY],
    ["too long", (s: string) => `${"a".repeat(9000)}${s}`, KEY],
  ])("are refused %s", (_, change, key) => {
    expect(openSession(change(sealSession(VIEWER, KEY, NOW + 60_000)), key, NOW)).toBeUndefined();
  });

  it("are bound to their purpose: a sign-in in progress is no session", () => {
    const pending = seal("sign-in", { s: "alice", n: ["@alice"] }, KEY, NOW + 60_000);
    expect(openSession(pending, KEY, NOW)).toBeUndefined();
    expect(unseal("sign-in", pending, KEY, NOW)).toEqual({ s: "alice", n: ["@alice"] });
    expect(unseal("sign-in", sealSession(VIEWER, KEY, NOW + 60_000), KEY, NOW)).toBeUndefined();
  });

  it("are read from a Cookie header among others", () => {
    expect(cookieValue("a=1; gitfleet_session=xyz.abc; b=2", "gitfleet_session")).toBe("xyz.abc");
    expect(cookieValue("gitfleet_session_old=1", "gitfleet_session")).toBeUndefined();
    expect(cookieValue(undefined, "gitfleet_session")).toBeUndefined();
  });
});
