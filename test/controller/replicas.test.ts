import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberClient } from "../../src/kube/member-client.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { createRepo, tempDir } from "../helpers/git-repo.js";
import { clientConfig, writeKubeconfig } from "../helpers/member.js";
import { haScenario } from "../helpers/replicas.js";
import { shardScenario } from "../helpers/shards.js";

/**
 * `gitfleet run --leader-elect` processes on one repository — three, and two holding shards of four
 * members — their Leases in a simulated management cluster over HTTP (the second tier runs the same
 * scenarios on a real API server).
 */
let management: SimulatedMember;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-replicas-"));
  management = await startMember({ name: "management" });
  await new MemberClient("management", clientConfig(management)).raw("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "gitfleet-system" },
  });
});
afterAll(async () => {
  await management.close();
  cleanup();
});

describe("replicas of gitfleet run", () => {
  it("one leads; a killed leader is replaced within the Lease; a paused one is fenced; standbys relay pushes", async () => {
    const repo = join(dir, "fleet");
    mkdirSync(repo);
    createRepo(repo, fleetFiles(BASE_SPEC));
    const { takeoverMs } = await haScenario(
      {
        repo,
        kubeconfig: writeKubeconfig(join(dir, "management.kubeconfig"), [management]),
        context: "management",
        namespace: "gitfleet-system",
        timings: { lease: "3s", deadline: "2s", retry: "500ms" },
        args: ["--no-sync"],
      },
      3000,
    );
    expect(takeoverMs).toBeGreaterThan(0);
  }, 120_000);

  it("sharded: each member synced by its shard's holder alone; a killed holder's shard taken over, its down member failing over", async () => {
    const { takeoverMs, shardOf } = await shardScenario(
      {
        dir,
        kubeconfig: writeKubeconfig(join(dir, "management-shards.kubeconfig"), [management]),
        context: "management",
        namespace: "gitfleet-system",
        timings: { lease: "3s", deadline: "2s", retry: "500ms" },
      },
      3000,
    );
    expect(new Set(shardOf.values())).toEqual(new Set([0, 1]));
    expect(takeoverMs).toBeGreaterThan(0);
  }, 180_000);
});
