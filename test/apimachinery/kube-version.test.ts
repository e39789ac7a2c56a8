import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareVersions,
  explainSkew,
  format,
  type KubeVersion,
  parseEtcdVersion,
  parseGitVersion,
  parseKubeVersion,
} from "../../src/apimachinery/kube-version.js";
import { serviceIP } from "../../src/manifests/controlplane/endpoints.js";

const v = (text: string): KubeVersion => {
  const parsed = parseKubeVersion(text);
  if (!parsed) throw new Error(`not a version: ${text}`);
  return parsed;
};

describe("Kubernetes versions", () => {
  it.each([
    ["v1.34.1", { major: 1, minor: 34, patch: 1, pre: "" }],
    ["v1.35.0-rc.1", { major: 1, minor: 35, patch: 0, pre: "rc.1" }],
    ["1.34.1", undefined],
    ["v1.34", undefined],
    ["v1.34.1 ", undefined],
    ["latest", undefined],
  ])("parses %s", (text, expected) => {
    expect(parseKubeVersion(text)).toEqual(expected);
  });

  it.each([
    ["v1.31.4-eks-2f2a3b1", "v1.31.4"],
    ["v1.30.2+k3s1", "v1.30.2"],
    ["v1.32.0-gitfleet-sim", "v1.32.0"],
    ["v1.35.0-rc.1", "v1.35.0-rc.1"],
    ["v1.35.0-alpha.3.123+abcdef", "v1.35.0-alpha.3.123"],
  ])("reads the gitVersion %s a member reports", (text, expected) => {
    expect(format(parseGitVersion(text) as KubeVersion)).toBe(expected);
  });

  it.each([
    ["3.5.16-0", { major: 3, minor: 5, patch: 16, pre: "" }],
    ["3.6.4", { major: 3, minor: 6, patch: 4, pre: "" }],
    ["v3.5.16", undefined],
  ])("parses the etcd tag %s", (text, expected) => {
    expect(parseEtcdVersion(text)).toEqual(expected);
  });

  it.each([
    ["v1.34.1", "v1.34.2", -1],
    ["v1.34.10", "v1.34.9", 1],
    ["v1.35.0-rc.1", "v1.35.0", -1],
    ["v1.35.0-alpha.2", "v1.35.0-beta.0", -1],
    ["v1.35.0-rc.2", "v1.35.0-rc.10", -1],
    ["v1.33.9", "v1.34.0", -1],
    ["v1.34.1", "v1.34.1", 0],
  ])("orders %s before or after %s", (a, b, sign) => {
    expect(Math.sign(compareVersions(v(a), v(b)))).toBe(sign);
    expect(Math.sign(compareVersions(v(b), v(a))) + sign).toBe(0);
  });

  it("orders as a total order (antisymmetric and transitive)", () => {
    const version = fc
      .tuple(
        fc.integer({ min: 20, max: 40 }),
        fc.integer({ min: 0, max: 12 }),
        fc.constantFrom("", "rc.1", "rc.2", "alpha.0"),
      )
      .map(([minor, patch, pre]) => v(`v1.${minor}.${patch}${pre ? `-${pre}` : ""}`));
    fc.assert(
      fc.property(version, version, version, (a, b, c) => {
        expect(Math.sign(compareVersions(a, b)) + Math.sign(compareVersions(b, a))).toBe(0);
        if (compareVersions(a, b) <= 0 && compareVersions(b, c) <= 0)
          expect(compareVersions(a, c)).toBeLessThanOrEqual(0);
      }),
    );
  });

  // Kubernetes' version-skew policy for kube-controller-manager and kube-scheduler.
  it.each([
    ["v1.34.1", "v1.34.1", undefined],
    ["v1.34.0", "v1.34.1", undefined],
    ["v1.33.7", "v1.34.1", undefined],
    ["v1.32.9", "v1.34.1", "2 minors older"],
    ["v1.34.2", "v1.34.1", "newer than kube-apiserver v1.34.1"],
    ["v1.35.0", "v1.34.1", "newer than kube-apiserver v1.34.1"],
  ])("a component at %s against kube-apiserver %s", (component, apiServer, why) => {
    const explained = explainSkew(v(component), v(apiServer));
    if (why === undefined) expect(explained).toBeUndefined();
    else expect(explained).toContain(why);
  });
});

describe("Service range addresses", () => {
  it.each([
    ["10.96.0.0/12", 1, "10.96.0.1"],
    ["10.96.0.0/12", 10, "10.96.0.10"],
    ["10.100.3.7/16", 10, "10.100.0.10"],
    ["172.20.0.0/16", 10, "172.20.0.10"],
    ["192.168.1.0/29", 10, undefined],
    ["255.255.255.0/24", 10, "255.255.255.10"],
    ["fd00::/108", 10, undefined],
    ["10.0.0.0/33", 1, undefined],
  ])("%s, address %i", (cidr, offset, expected) => {
    expect(serviceIP(cidr, offset)).toBe(expected);
  });
});
