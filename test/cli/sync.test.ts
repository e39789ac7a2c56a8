import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { writeKubeconfig } from "../helpers/member.js";

/** `gitfleet reconcile --once` with sync on: a real process applying to simulated members. */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
let dir: string;
let cleanup: () => void;
let members: SimulatedMember[];

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-cli-sync-"));
  mkdirSync(join(dir, "fleet"));
  members = await Promise.all(BASE_SPEC.clusters.map(({ name }) => startMember({ name })));
});
afterEach(async () => {
  await Promise.all(members.map((m) => m.close()));
  cleanup();
});

// Asynchronous on purpose: the members answer from this process.
function reconcile(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [BIN, "reconcile", "--repo", join(dir, "fleet"), "--once", "--log-level", "error", ...args],
      { encoding: "utf8", timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe("gitfleet reconcile --once --kubeconfig", () => {
  it("applies the rendered tree to every member and prints a line per cluster", async () => {
    createRepo(join(dir, "fleet"), fleetFiles(BASE_SPEC));
    const kubeconfig = writeKubeconfig(join(dir, "kubeconfig"), members);
    const result = await reconcile("--kubeconfig", kubeconfig);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {2}east: \d+ objects, \d+ created, 0 updated, 0 pruned$/m);
    expect(result.stdout.match(/^ {2}\w+: /gm)).toHaveLength(4);
    const east = members.find((m) => m.name === "east") as SimulatedMember;
    const web = (await (
      await fetch(`${east.url}/apis/apps/v1/namespaces/shop/deployments/web`)
    ).json()) as JsonMap;
    expect(asMap(web.spec).replicas).toBe(2);
    expect(gitIn(join(dir, "fleet"), "log", "-1", "--format=%s", "gitfleet/status")).toMatch(/^sync: east /);
    // Once more: nothing to apply.
    expect((await reconcile("--kubeconfig", kubeconfig)).stdout).toMatch(
      /east: \d+ objects, 0 created, 0 updated/,
    );
  });

  it("exits 1 and names the clusters it could not sync", async () => {
    createRepo(join(dir, "fleet"), fleetFiles(BASE_SPEC));
    const kubeconfig = writeKubeconfig(
      join(dir, "kubeconfig"),
      members.filter((m) => m.name !== "north"),
    );
    await members.find((m) => m.name === "west")?.faults.down();
    const result = await reconcile("--kubeconfig", kubeconfig);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /north: not synced \(no connection: context "north" is not in the kubeconfig/,
    );
    expect(result.stdout).toMatch(
      /west: not synced \(west did not answer: connection refused \(ECONNREFUSED\)\)/,
    );
    expect(result.stdout).toMatch(/east: \d+ objects, \d+ created/);
    const missing = await reconcile("--kubeconfig", join(dir, "missing.yaml"));
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(
      /east: not synced \(no connection: the kubeconfig \(--kubeconfig\) does not exist\)/,
    );
  });
});
