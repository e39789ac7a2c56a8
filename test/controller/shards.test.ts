import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberClient } from "../../src/kube/member-client.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { tempDir } from "../helpers/git-repo.js";
import { clientConfig, writeKubeconfig } from "../helpers/member.js";
import { shardScenario } from "../helpers/shards.js";

/**
 * Two `gitfleet run --leader-elect --shards 2` processes over four simulated members, their Leases in
 * a simulated management cluster over HTTP (the second tier runs the same scenario on a real API server).
 */
let management: SimulatedMember;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-shards-"));
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

describe("shards of gitfleet run", () => {
  it("each member is synced by its shard's holder alone; a killed holder's shard is taken over and its down member fails over", async () => {
    const { takeoverMs, shardOf } = await shardScenario(
      {
        dir,
        kubeconfig: writeKubeconfig(join(dir, "management.kubeconfig"), [management]),
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
