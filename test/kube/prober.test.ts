import { describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { createRepo, gitIn } from "../helpers/git-repo.js";
import { membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";

/** Probing members' /readyz through the controller: conditions and taints on the status branch. */
const fleet = membersPerTest(
  "gitfleet-prober-",
  BASE_SPEC.clusters.map((c) => c.name),
);

const FLEET_YAML =
  "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: t\nspec:\n  clusterHealth:\n    failureThreshold: 2\n    successThreshold: 2\n    noExecuteAfter: 1s\n";

describe("cluster health probing", () => {
  it("marks a member that stops answering NotReady after the threshold, NoExecute after the grace period, Ready after enough successes", async () => {
    const files = new Map(fleetFiles(BASE_SPEC));
    files.set("fleet.yaml", new TextEncoder().encode(FLEET_YAML));
    createRepo(fleet.dir, files);
    // The controller's clock, moved by the test: the grace period passes without a wait.
    let clock = Date.now();
    const { round, prober } = await pushController(fleet.dir, fleet.kubeconfig, {}, { now: () => clock });
    await round();
    const west = fleet.members.find((m) => m.name === "west") as SimulatedMember;
    const condition = (cluster: string) =>
      asMap(asMap(statusFile(fleet.dir, `status/clusters/${cluster}.yaml`).observed).condition);

    await prober.probeOnce();
    await round();
    expect(condition("west")).toMatchObject({ ready: true, taints: [] });

    await west.faults.down();
    await prober.probeOnce();
    expect(prober.conditions().get("west")?.health.ready).toBe(true);
    await prober.probeOnce();
    await round();
    expect(condition("west")).toMatchObject({
      ready: false,
      reason: "Unreachable",
      taints: ["gitfleet.io/unreachable:NoSchedule"],
    });
    expect(condition("east")).toMatchObject({ ready: true, taints: [] });
    expect(gitIn(fleet.dir, "log", "-1", "--format=%s", "gitfleet/status")).toMatch(/west unreachable/);

    // The grace period passes with the member still down: NoExecute too.
    clock += 1100;
    await prober.probeOnce();
    await round();
    expect(condition("west").taints).toEqual([
      "gitfleet.io/unreachable:NoSchedule",
      "gitfleet.io/unreachable:NoExecute",
    ]);

    await west.faults.up();
    await prober.probeOnce();
    expect(prober.conditions().get("west")?.health.ready).toBe(false);
    await prober.probeOnce();
    await round();
    expect(condition("west")).toMatchObject({ ready: true, taints: [] });
  });
});
