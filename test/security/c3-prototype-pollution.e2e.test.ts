import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { emitYaml } from "../../src/render/yaml-emitter.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { commitTree, createRepo, tempDir } from "../helpers/git-repo.js";
import { MINIMAL_FLEET } from "../helpers/minimal-fleet.js";

/**
 * C3 end to end (security audit): with an operator kubeconfig whose user runs a bash credential
 * helper, as many do, an Override merge patch keyed `__proto__` put BASH_ENV into every child
 * process's environment, and bash ran the command in it — code execution on the controller from a
 * merged pull request. An interpreter path through `__proto__` set every request's timeout. Now such
 * a commit is invalid: `reconcile --once` says so, exits 1, and the credential helper it still runs
 * (for the previous, valid render's sync) runs clean.
 */

let dir: string;
let cleanup: () => void;
let members: SimulatedMember[];

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-c3-e2e-"));
  members = await Promise.all([startMember({ name: "east" }), startMember({ name: "west" })]);
});
afterEach(async () => {
  await Promise.all(members.map((m) => m.close()));
  cleanup();
});

// The operator's kubeconfig: every member's user gets its token from a bash script, which notes each run.
function execKubeconfig(helper: string): string {
  return emitYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: members.map((m) => ({
      name: m.name,
      cluster: { server: m.url, "insecure-skip-tls-verify": true },
    })),
    users: [
      {
        name: "helper",
        user: {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1beta1",
            command: helper,
            interactiveMode: "Never",
          },
        },
      },
    ],
    contexts: members.map((m) => ({ name: m.name, context: { cluster: m.name, user: "helper" } })),
    "current-context": "east",
  });
}

const OVERRIDE = (proof: string) => `apiVersion: gitfleet.io/v1alpha1
kind: Override
metadata:
  name: tuning
spec:
  apps: [web]
  overrideRules:
    - targetCluster:
        clusterNames: [east]
      overriders:
        mergePatch:
          __proto__:
            BASH_ENV: "$(id > ${proof})"
`;

const INTERPRETER = `apiVersion: gitfleet.io/v1alpha1
kind: ResourceInterpreter
metadata:
  name: widget
spec:
  target:
    apiVersion: example.com/v1
    kind: Widget
  replicasPath: __proto__.timeoutMs
`;

describe("C3: a polluting commit through reconcile --once", () => {
  it.each([
    [
      "the audit's mergePatch __proto__ BASH_ENV",
      (proof: string) => ({ "overrides/tuning.yaml": OVERRIDE(proof) }),
    ],
    [
      "an interpreter path __proto__.timeoutMs",
      () => ({
        "interpreters/widget.yaml": INTERPRETER,
        "apps/web/widget.yaml":
          "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  replicas: 2\n",
      }),
    ],
  ])("%s: invalid, nothing polluted, the credential helper runs clean", async (_name, attack) => {
    const proof = join(dir, "pp-rce-proof");
    const runs = join(dir, "helper-runs");
    const helper = join(dir, "token.sh");
    writeFileSync(
      helper,
      `#!/bin/bash\necho run >> ${runs}\necho '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"not-a-real-token"}}'\n`,
    );
    chmodSync(helper, 0o755);
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(kubeconfig, execKubeconfig(helper));
    const repo = join(dir, "fleet");
    mkdirSync(repo);
    createRepo(repo, fileTreeFromText(MINIMAL_FLEET));
    const reconcile = () =>
      gitfleetAsync([
        "reconcile",
        "--repo",
        repo,
        "--once",
        "--kubeconfig",
        kubeconfig,
        "--log-level",
        "error",
      ]);

    const first = await reconcile();
    expect(first.stdout).toMatch(/east: \d+ objects, \d+ created/);
    expect(first.code).toBe(0);
    const helperRuns = () => readFileSync(runs, "utf8").split("\n").filter(Boolean).length;
    const before = helperRuns();
    expect(before).toBeGreaterThan(0);

    commitTree(repo, fileTreeFromText({ ...MINIMAL_FLEET, ...attack(proof) }), "tuning");
    const second = await reconcile();
    expect(existsSync(proof)).toBe(false);
    expect(second.stdout).toMatch(/committed \(invalid, 1 error/);
    expect(second.code).toBe(1);
    // The sync of the last valid render still ran, and with it the helper: in a clean environment,
    // with the usual timeouts.
    expect(second.stdout).toMatch(/east: \d+ objects, 0 created/);
    expect(second.stdout).toMatch(/west: \d+ objects, 0 created/);
    expect(helperRuns()).toBeGreaterThan(before);
  });
});
