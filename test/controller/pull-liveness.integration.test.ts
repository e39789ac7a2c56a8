import { describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { beat } from "../../src/git/agent-heartbeat.js";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { createRepo, gitIn } from "../helpers/git-repo.js";
import { DIRECT_FAILOVER_PLACEMENT, MINIMAL_FLEET, webDeployment } from "../helpers/minimal-fleet.js";
import { membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";
import { clusterYaml } from "../helpers/two-clusters.js";

// A pull-mode member's liveness, end to end: its agent's heartbeats on their ref, the controller's
// prober judging the silence with the probe thresholds, the condition on the status branch, and its
// Divided workload failing over. The clock is the test's, so a minute of silence takes no time.

const fleet = membersPerTest("gitfleet-pull-liveness-", ["east", "west"]);

const FLEET_YAML = `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: t
spec:
  clusterHealth:
    failureThreshold: 2
    successThreshold: 1
    noExecuteAfter: 10s
`;

function fleetRepo() {
  return fileTreeFromText({
    "fleet.yaml": FLEET_YAML,
    "clusters/east.yaml": clusterYaml("east"),
    "clusters/west.yaml": clusterYaml("west"),
    "clusters/north.yaml": clusterYaml("north", { extra: "  connection:\n    mode: pull\n" }),
    "apps/web/app.yaml": MINIMAL_FLEET["apps/web/app.yaml"] ?? "",
    "apps/web/deployment.yaml": webDeployment(6, "100m"),
    "placements/web.yaml": DIRECT_FAILOVER_PLACEMENT,
  });
}

describe("a pull-mode member's liveness", () => {
  it("is NotReady after its agent falls silent, its replicas move, and a restarted controller keeps the silence", async () => {
    createRepo(fleet.dir, fleetRepo());
    let now = Date.parse("2026-12-01T12:00:00Z");
    const clock = () => now;
    const repo = await FleetRepo.open({ location: fleet.dir });
    const agentBeats = () =>
      beat(repo, "gitfleet/status", "north", {
        name: "gitfleet agent",
        email: "agent@north",
        timestamp: Math.floor(now / 1000),
      });
    const controller = await pushController(fleet.dir, fleet.kubeconfig, {}, { now: clock });
    const decided = () =>
      asMap(asMap(asMap(asList(statusFile(fleet.dir, appStatusPath("web")).workloads)[0]).decision).clusters);
    const condition = () =>
      asMap(asMap(statusFile(fleet.dir, "status/clusters/north.yaml").observed).condition);
    const step = async (seconds: number, beating: boolean) => {
      now += seconds * 1000;
      if (beating) await agentBeats();
      await controller.prober.probeOnce();
      await controller.round();
    };
    await controller.round();
    await step(1, true);
    expect(decided()).toEqual({ east: 2, north: 2, west: 2 });
    expect(controller.prober.conditions().get("north")?.health.ready).toBe(true);
    // Beating every 30 s keeps it Ready.
    for (let i = 0; i < 3; i++) await step(30, true);
    expect(controller.prober.conditions().get("north")?.health.ready).toBe(true);
    // Silent: after 60 s the probes fail; the second failure makes it NotReady.
    await step(61, false);
    expect(controller.prober.conditions().get("north")?.health.ready).toBe(true);
    await step(1, false);
    expect(condition()).toMatchObject({ ready: false, reason: "Unreachable" });
    expect(String(condition().lastError)).toMatch(/^no heartbeat from the agent for \d+s$/);
    // NoExecute after 10 s, tolerated for 0 s: north's replicas move.
    await step(11, false);
    await step(1, false);
    expect(decided()).toEqual({ east: 3, west: 3 });
    expect(gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status")).toMatch(
      /failover: cluster north Unreachable for \d+s/,
    );
    // A restarted controller still sees north NotReady: the silence is not forgotten.
    const restarted = await pushController(fleet.dir, fleet.kubeconfig, {}, { now: clock });
    now += 1000;
    await restarted.prober.probeOnce();
    await restarted.round();
    expect(restarted.prober.conditions().get("north")?.health.ready).toBe(false);
    expect(decided()).toEqual({ east: 3, west: 3 });
  });
});
