import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchesNamePattern, pathMatcher } from "../../src/model/path-patterns.js";

// A Team's path patterns, CODEOWNERS-style, matched without regular expressions.

describe("path patterns", () => {
  it.each([
    ["apps/shop/**", "apps/shop/deployment.yaml", true],
    ["apps/shop/**", "apps/shop/overlays/prod/kustomization.yaml", true],
    ["apps/shop/**", "apps/shopping/deployment.yaml", false],
    ["apps/shop/", "apps/shop/a.yaml", true],
    ["/apps/shop/**", "apps/shop/a.yaml", true],
    ["placements/shop-*.yaml", "placements/shop-api.yaml", true],
    ["placements/shop-*.yaml", "placements/shop-api/x.yaml", false],
    ["apps/*/deployment.yaml", "apps/web/deployment.yaml", true],
    ["apps/*/deployment.yaml", "apps/web/base/deployment.yaml", false],
    ["apps/**/deployment.yaml", "apps/web/base/deployment.yaml", true],
    ["apps/**/deployment.yaml", "apps/deployment.yaml", true],
    ["**/secret.yaml", "apps/a/b/secret.yaml", true],
    ["fleet.yaml", "fleet.yaml", true],
    ["fleet.yaml", "fleet.yml", false],
    ["apps/a.b/**", "apps/aXb/c.yaml", false],
  ])("%s matches %s: %s", (pattern, path, expected) => {
    expect(pathMatcher(pattern)(path)).toBe(expected);
  });

  it.each([
    ["shop-*", "shop-eu", true],
    ["shop-*", "shop", false],
    ["*", "anything", true],
    ["shop", "shop", true],
    ["s*p", "shop", true],
  ])("namespace pattern %s matches %s: %s", (pattern, name, expected) => {
    expect(matchesNamePattern(pattern, name)).toBe(expected);
  });

  it("agrees with a regular expression on simple patterns, and answers at once on hostile ones", () => {
    const segment = fc.stringMatching(/^[ab*]{1,4}$/).filter((s) => !s.includes("**"));
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.array(fc.stringMatching(/^[ab]{1,4}$/), { minLength: 1, maxLength: 4 }),
        (parts, path) => {
          const pattern = parts.join("/");
          const regex = new RegExp(`^${parts.map((p) => p.replaceAll("*", "[^/]*")).join("/")}$`);
          const file = path.join("/");
          expect(pathMatcher(pattern)(file)).toBe(regex.test(file));
        },
      ),
    );
    const hostile = `${"*a".repeat(120)}*b`;
    expect(pathMatcher(hostile)("a".repeat(3000))).toBe(false);
    expect(pathMatcher(`${"**/".repeat(80)}x`)(`${"a/".repeat(1000)}y`)).toBe(false);
  });
});
