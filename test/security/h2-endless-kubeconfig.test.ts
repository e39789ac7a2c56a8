import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { simulatedKubeconfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { createRepo, tempDir } from "../helpers/git-repo.js";
import { MINIMAL_FLEET } from "../helpers/minimal-fleet.js";

/**
 * H2 (security audit): `kubeconfigFile: /dev/zero` was read whole and synchronously on every probe
 * and sync — the controller grew by gigabytes a second until it was killed, and came back to do it
 * again; a FIFO blocked its event loop forever. Now a Cluster can name only a file of the operator's
 * directory, and a kubeconfig is read only when it is a regular file of at most 1 MiB, without
 * blocking: whatever the directory holds, the other members are synced and the process finishes.
 */

let dir: string;
let cleanup: () => void;
let east: SimulatedMember;

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-h2-"));
  east = await startMember({ name: "east" });
});
afterEach(async () => {
  await east.close();
  cleanup();
});

// The minimal fleet with west's connection as given, committed in a new repository.
function fleetWithWest(connection: string): string {
  const repo = join(dir, "fleet");
  mkdirSync(repo);
  createRepo(
    repo,
    fileTreeFromText({
      ...MINIMAL_FLEET,
      "clusters/west.yaml": `${MINIMAL_FLEET["clusters/west.yaml"]}  connection:\n${connection}`,
    }),
  );
  return repo;
}

describe("H2: endless, blocking and huge kubeconfigs", () => {
  it("the audit's /dev/zero is a validation error: reconcile --once reads nothing and exits 1", async () => {
    const repo = fleetWithWest("    kubeconfigFile: /dev/zero\n");
    const result = await gitfleetAsync(["reconcile", "--repo", repo, "--once", "--no-sync"], {
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/\(invalid, 1 error/);
  });

  it.each([
    // Refused before its type is even looked at: /dev/zero is outside the directory.
    ["a symlink to /dev/zero", (path: string) => symlinkSync("/dev/zero", path), "is outside its directory"],
    ["a FIFO", (path: string) => execFileSync("mkfifo", [path]), "is not a regular file"],
    ["a 2 MiB file", (path: string) => writeFileSync(path, `# ${"x".repeat(2 * 2 ** 20)}\n`), "is too large"],
    ["a directory", (path: string) => mkdirSync(path), "is not a regular file"],
    [
      "a symlink out of the directory",
      (path: string) => {
        const outside = join(dir, "elsewhere.yaml");
        writeFileSync(outside, simulatedKubeconfig([{ name: "west", url: east.url }]));
        symlinkSync(outside, path);
      },
      "is outside its directory",
    ],
  ])(
    "%s in the operator's directory: west is not synced, east is, and the process exits",
    async (_name, make, reason) => {
      const repo = fleetWithWest("    kubeconfigFile: west.yaml\n");
      const kubeconfigs = join(dir, "kubeconfigs");
      mkdirSync(kubeconfigs);
      make(join(kubeconfigs, "west.yaml"));
      const kubeconfig = join(dir, "members.kubeconfig");
      writeFileSync(kubeconfig, simulatedKubeconfig([east]));
      const result = await gitfleetAsync(
        ["reconcile", "--repo", repo, "--once", "--kubeconfig", kubeconfig, "--kubeconfig-dir", kubeconfigs],
        { timeoutMs: 60_000 },
      );
      expect(result.stdout).toContain(
        `west: not synced (no connection: the kubeconfig file west.yaml ${reason})`,
      );
      expect(result.stdout).toMatch(/east: \d+ objects, \d+ created/);
      expect(result.code).toBe(1);
      expect(`${result.stdout}${result.stderr}`).not.toContain(kubeconfigs);
      expect(`${result.stdout}${result.stderr}`).not.toContain("elsewhere");
    },
  );
});
