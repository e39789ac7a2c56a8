import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ApiTokens } from "../../src/server/api-tokens.js";

const hash = (token: string) => `sha256:${createHash("sha256").update(token).digest("hex")}`;
const FILE = `# automation tokens
ci @example-shop/platform ${hash("token-one-test-only")}
games-bot @example-shop/games,@games-bot ${hash("token-two-test-only")}
`;

describe("API tokens", () => {
  it("act as the owner names their line gives, found by the token's hash", () => {
    const tokens = ApiTokens.parse(FILE);
    expect(tokens.viewerOf("token-one-test-only")).toEqual({
      subject: "token:ci",
      names: ["@example-shop/platform"],
    });
    expect(tokens.viewerOf("token-two-test-only")).toEqual({
      subject: "token:games-bot",
      names: ["@example-shop/games", "@games-bot"],
    });
  });

  it.each([["token-one-test-onlY"], [""], ["x".repeat(5000)], [hash("token-one-test-only")]])(
    "refuse %s",
    (token) => {
      expect(ApiTokens.parse(FILE).viewerOf(token)).toBeUndefined();
    },
  );

  it.each([
    ["ci @platform token-in-the-clear", "line 1: expected"],
    [`ci ${hash("x")}`, "line 1: expected"],
    [`\n\nci , ${hash("x")}`, "line 3: the token acts as nobody"],
  ])("refuse a file line %j, naming the line", (text, error) => {
    expect(() => ApiTokens.parse(text)).toThrow(error);
  });
});
