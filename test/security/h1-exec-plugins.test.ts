import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { emitYaml } from "../../src/render/yaml-emitter.js";
import { simulatedKubeconfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { createRepo, tempDir } from "../helpers/git-repo.js";
import { MINIMAL_FLEET } from "../helpers/minimal-fleet.js";

/**
 * H1 (security audit): a Cluster's `kubeconfigFile` could name any file — one the pull request
 * itself added to the work tree the controller runs in — and client-node ran its exec plugin on the
 * first request: code execution on the controller from a pull request. Now the repo can name only a
 * file of the operator's --kubeconfig-dir or a GITFLEET_KUBECONFIG_* variable, and a kubeconfig
 * from either may run an exec plugin only when the operator allowed it for that source.
 */

let dir: string;
let cleanup: () => void;
let east: SimulatedMember;
let west: SimulatedMember;

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-h1-"));
  [east, west] = await Promise.all([startMember({ name: "east" }), startMember({ name: "west" })]);
});
afterEach(async () => {
  await Promise.all([east.close(), west.close()]);
  cleanup();
});

// The audit's kubeconfig: its user's exec plugin leaves proof that it ran, then hands out a token.
function execKubeconfig(context: string, server: string, proof: string): string {
  const credential = JSON.stringify({
    apiVersion: "client.authentication.k8s.io/v1beta1",
    kind: "ExecCredential",
    status: { token: "not-a-real-token" },
  });
  return emitYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [
      {
        name: "u",
        user: {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1beta1",
            command: "sh",
            args: ["-c", `id > ${proof}; echo '${credential}'`],
            interactiveMode: "Never",
          },
        },
      },
    ],
    contexts: [{ name: context, context: { cluster: "c", user: "u" } }],
    "current-context": context,
  });
}

// The minimal fleet with west connected as `connection` says, and extra files in the repo.
function fleetRepo(connection: string, extra: Record<string, string> = {}): string {
  const repo = join(dir, "fleet");
  mkdirSync(repo);
  createRepo(
    repo,
    fileTreeFromText({
      ...MINIMAL_FLEET,
      "clusters/west.yaml": `${MINIMAL_FLEET["clusters/west.yaml"]}  connection:\n${connection}`,
      ...extra,
    }),
  );
  return repo;
}

function operatorKubeconfig(): string {
  const path = join(dir, "members.kubeconfig");
  writeFileSync(path, simulatedKubeconfig([east]));
  return path;
}

describe("H1: exec plugins in kubeconfigs the fleet repo selects", () => {
  it("the audit's attack: a kubeconfig the pull request added to the work tree is never read", async () => {
    const proof = join(dir, "exec-rce-proof");
    const repo = fleetRepo("    mode: push\n    kubeconfigFile: docs-kubeconfig.yaml\n", {
      "docs-kubeconfig.yaml": execKubeconfig("west", west.url, proof),
    });
    // The controller runs in the work tree, as the README's ./fleet examples do.
    const result = await gitfleetAsync(
      ["reconcile", "--repo", repo, "--once", "--kubeconfig", operatorKubeconfig(), "--log-level", "error"],
      { cwd: repo },
    );
    expect(existsSync(proof)).toBe(false);
    expect(result.stdout).toContain(
      "west: not synced (no connection: no kubeconfig directory is configured (--kubeconfig-dir), so kubeconfigFile cannot be used)",
    );
    expect(result.stdout).toMatch(/east: \d+ objects, \d+ created/);
  });

  it.each([
    {
      source: "directory",
      connection: "    kubeconfigFile: west.yaml\n",
      place: (kubeconfig: string) => {
        mkdirSync(join(dir, "kubeconfigs"));
        writeFileSync(join(dir, "kubeconfigs", "west.yaml"), kubeconfig);
        return { args: ["--kubeconfig-dir", join(dir, "kubeconfigs")], env: {} };
      },
      refusal: "the kubeconfig from the kubeconfig directory runs an exec plugin",
    },
    {
      source: "environment",
      connection: "    kubeconfigEnv: GITFLEET_KUBECONFIG_WEST\n",
      place: (kubeconfig: string) => ({ args: [], env: { GITFLEET_KUBECONFIG_WEST: kubeconfig } }),
      refusal: "the kubeconfig from the environment runs an exec plugin",
    },
  ])("a kubeconfig from the $source runs its plugin only with --allow-exec $source", async (c) => {
    const proof = join(dir, "exec-proof");
    const repo = fleetRepo(c.connection);
    const { args, env } = c.place(execKubeconfig("west", west.url, proof));
    const base = ["reconcile", "--repo", repo, "--once", "--kubeconfig", operatorKubeconfig(), ...args];

    const refused = await gitfleetAsync([...base, "--log-level", "error"], { env });
    expect(refused.stdout).toContain(`west: not synced (no connection: ${c.refusal} for context "west"`);
    expect(refused.stdout).toMatch(/east: \d+ objects/);
    expect(refused.code).toBe(1);
    expect(existsSync(proof)).toBe(false);

    // The operator allows it for that source: the plugin runs and west is synced with its token.
    const allowed = await gitfleetAsync([...base, "--allow-exec", "kubeconfig", c.source], { env });
    expect(allowed.stdout).toMatch(/west: \d+ objects, \d+ created/);
    expect(allowed.code).toBe(0);
    expect(existsSync(proof)).toBe(true);
  });

  it("--allow-exec none refuses the operator's own kubeconfig's plugins too", async () => {
    const proof = join(dir, "exec-proof");
    const repo = fleetRepo("    context: west\n");
    const kubeconfig = join(dir, "exec.kubeconfig");
    writeFileSync(kubeconfig, execKubeconfig("west", west.url, proof));
    const result = await gitfleetAsync(
      ["reconcile", "--repo", repo, "--once", "--kubeconfig", kubeconfig, "--allow-exec", "none"],
      { env: {} },
    );
    expect(result.stdout).toContain(
      'west: not synced (no connection: the kubeconfig runs an exec plugin for context "west", which the operator allows only for no source (--allow-exec))',
    );
    expect(existsSync(proof)).toBe(false);
  });
});
