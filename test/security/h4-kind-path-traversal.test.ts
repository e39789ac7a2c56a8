import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { formatProblem } from "../../src/model/problem.js";
import { gitfleetCli } from "../helpers/cli.js";
import { branchFiles, createRepo, tempDir } from "../helpers/git-repo.js";
import { MINIMAL_FLEET, minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * H4 (security audit): `kind` and `apiVersion` were only checked to be non-empty, so a kind such as
 * "x/../../../../pwned" made `gitfleet render --out` write outside OUT and made every reconcile of
 * the commit throw. Kinds, apiVersions and names are now checked as the API server checks them,
 * whatever the spelling, and nothing is ever written outside OUT.
 */

const manifest = (apiVersion: string, kind: string, name = "n") =>
  `apiVersion: ${JSON.stringify(apiVersion)}\nkind: ${JSON.stringify(kind)}\nmetadata:\n  name: ${JSON.stringify(name)}\ndata:\n  "$(id>/tmp/rce-proof)": "1"\n`;

describe("H4: kinds, apiVersions and names the API server would refuse", () => {
  it.each([
    ["the audit's traversal", "v1", "x/../../../../../../../pwned", "/kind"],
    ["a kind with a slash", "v1", "x/y", "/kind"],
    ["a kind with a dot", "v1", "Config.Map", "/kind"],
    ["a lowercase kind", "v1", "configMap", "/kind"],
    ["a kind with a space", "v1", "Config Map", "/kind"],
    ["a kind with a newline", "v1", "ConfigMap\nv1 evil", "/kind"],
    ["an apiVersion with two slashes", "a/b/v1", "ConfigMap", "/apiVersion"],
    ["an apiVersion climbing up", "../v1", "ConfigMap", "/apiVersion"],
    ["an uppercase group", "Apps/v1", "Deployment", "/apiVersion"],
    ["a version that is not a label", "apps/V1", "Deployment", "/apiVersion"],
  ])("%s is an INVALID_NAME error at its line", (_name, apiVersion, kind, pointer) => {
    const result = loadFleet(minimalFleetWith({ "apps/web/x.yaml": manifest(apiVersion, kind) }));
    expect(result.model).toBeUndefined();
    const errors = result.problems.filter((p) => p.severity === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: "apps/web/x.yaml", path: pointer, code: "INVALID_NAME" });
    expect(errors[0]?.line).toBe(pointer === "/kind" ? 2 : 1);
  });

  it.each([
    ["a Role name with a slash", "evil/../x"],
    ["a Role name with a newline", "evil\nv1 x - -"],
    ["a Role name of ..", ".."],
  ])("%s is refused", (_name, name) => {
    const result = loadFleet(
      // A Role has rules, not data (the schema check would say so as well).
      minimalFleetWith({
        "apps/web/role.yaml": manifest("rbac.authorization.k8s.io/v1", "Role", name).replace(
          /data:\n.*\n$/,
          "rules: []\n",
        ),
      }),
    );
    expect(result.problems.filter((p) => p.severity === "error").map(formatProblem)).toEqual([
      expect.stringMatching(/^apps\/web\/role\.yaml:4:9: error: \/metadata\/name: .* \[INVALID_NAME\]$/),
    ]);
  });
});

describe("H4: through the CLI", () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir("gitfleet-h4-"));
  });
  afterEach(() => cleanup());

  it("gitfleet render --out writes nothing anywhere for the audit's fleet", () => {
    const fleet = join(dir, "fleet");
    for (const [path, text] of Object.entries({
      ...MINIMAL_FLEET,
      "apps/web/x.yaml": manifest("v1", "x/../../../../../pwned"),
    })) {
      mkdirSync(join(fleet, path, ".."), { recursive: true });
      writeFileSync(join(fleet, path), text);
    }
    const out = join(dir, "out/a/b");
    const result = gitfleetCli(["render", fleet, "--out", out]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("[INVALID_NAME]");
    expect(existsSync(join(dir, "pwned.n.yaml"))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["fleet"]);
  });

  it("reconcile --once records the commit as invalid, and says so again when run again", () => {
    const repo = join(dir, "repo");
    mkdirSync(repo);
    createRepo(
      repo,
      fileTreeFromText({ ...MINIMAL_FLEET, "apps/web/x.yaml": manifest("v1", "x/../../../pwned") }),
    );
    const first = gitfleetCli(["reconcile", "--repo", repo, "--once", "--no-sync", "--log-level", "error"]);
    expect(first.stdout).toMatch(/committed \(invalid, 1 error recorded/);
    expect(first.code).toBe(1);
    const source = branchFiles(repo, "gitfleet/status").get("status/source.yaml") ?? "";
    expect(source).toContain("code: INVALID_NAME");
    expect(source).toContain("valid: false");
    expect([...branchFiles(repo, "gitfleet/status").keys()].filter((p) => p.includes("pwned"))).toEqual([]);
    const second = gitfleetCli(["reconcile", "--repo", repo, "--once", "--no-sync", "--log-level", "error"]);
    expect(second.stdout).toMatch(/(up-to-date|unchanged) \(invalid, 1 error recorded/);
    expect(second.code).toBe(1);
  });
});
