import { describe, expect, it } from "vitest";
import {
  explainInvalidDns1123Label,
  explainInvalidDns1123Subdomain,
  explainInvalidLabelKey,
  explainInvalidLabelValue,
} from "../../src/apimachinery/names.js";

describe("Kubernetes names", () => {
  it.each([
    ["web", true, true],
    ["web-1", true, true],
    ["web.shop", false, true],
    ["Web", false, false],
    ["-web", false, false],
    ["web-", false, false],
    ["a".repeat(63), true, true],
    ["a".repeat(64), false, true],
    ["", false, false],
  ])("%s: label %s, subdomain %s", (name, label, subdomain) => {
    expect(explainInvalidDns1123Label(name) === undefined).toBe(label);
    expect(explainInvalidDns1123Subdomain(name) === undefined).toBe(subdomain);
  });

  it.each([
    ["app", true],
    ["app.kubernetes.io/name", true],
    ["example.com/a_b.c-d", true],
    ["Example.com/a", false],
    ["/a", false],
    ["a/", false],
    ["-a", false],
    [`${"a".repeat(64)}`, false],
  ])("label key %s valid: %s", (key, valid) => {
    expect(explainInvalidLabelKey(key) === undefined).toBe(valid);
  });

  it.each([
    ["", true],
    ["prod", true],
    ["v1.2_3-a", true],
    ["-prod", false],
    ["has space", false],
    ["a".repeat(64), false],
  ])("label value %j valid: %s", (value, valid) => {
    expect(explainInvalidLabelValue(value) === undefined).toBe(valid);
  });
});
