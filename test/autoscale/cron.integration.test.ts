import { describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { createRepo, gitIn } from "../helpers/git-repo.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";
import { webOnTwoClusters } from "../helpers/two-clusters.js";

// CronScale in the controller, with an injected clock: a rule fires at its time in its time zone,
// and a rule missed while the controller was down runs once when it starts again.

const fleet = membersPerTest("gitfleet-cron-", ["east", "west"]);

const FILES = {
  ...webOnTwoClusters(2, 1),
  "autoscaling/web-peak.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: CronScale
metadata:
  name: web-peak
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  rules:
    - name: morning
      schedule: "0 8 * * *"
      timeZone: Europe/Berlin
      targetReplicas: 6
    - name: evening
      schedule: "0 20 * * *"
      timeZone: Europe/Berlin
      targetReplicas: 2
`,
};

const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const subjects = () => gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status").split("\n");

async function counts(): Promise<string> {
  const of = async (name: string) =>
    asMap((await liveObject(member(name), "/apis/apps/v1/namespaces/shop/deployments/web"))?.spec).replicas;
  return `east=${await of("east")} west=${await of("west")}`;
}

async function until(controller: Awaited<ReturnType<typeof pushController>>, expected: string) {
  for (let i = 0; i < 80; i++) {
    await controller.round();
    if ((await counts()) === expected) return;
    await sleep(50);
  }
  throw new Error(
    `members run ${await counts()}, not ${expected}; status: ${subjects().slice(0, 4).join(" | ")}`,
  );
}

describe("CronScale with an injected clock", () => {
  it("fires a rule at its time in its time zone, and runs a missed rule once at start", async () => {
    createRepo(fleet.dir, fileTreeFromText(FILES));
    let clock = Date.parse("2026-11-30T06:59:00Z"); // 07:59 in Berlin
    const first = await pushController(fleet.dir, fleet.kubeconfig, {}, { now: () => clock });
    await until(first, "east=2 west=1");
    await first.round();
    // From its first sight on, gitfleet follows the CronScale: that is recorded, nothing fires yet.
    expect(subjects()).toContain("autoscale: cronscale web-peak: followed from now on");
    expect(subjects().some((s) => s.startsWith("autoscale: web-peak"))).toBe(false);

    clock = Date.parse("2026-11-30T07:00:30Z"); // 08:00:30 in Berlin: morning is due
    await until(first, "east=4 west=2");
    expect(subjects()).toContain(
      "autoscale: web-peak: cronscale 3 → 6 (rule morning, 0 8 * * * Europe/Berlin) east=2→4 west=1→2",
    );
    // Once only: more rounds at the same time change nothing.
    const commits = subjects().length;
    await first.round();
    await first.round();
    expect(subjects().filter((s) => s.startsWith("autoscale: web-peak")).length).toBe(1);
    expect(subjects().length).toBeLessThanOrEqual(commits + 1);

    // The controller is down across 20:00 Berlin (19:00Z) and starts at 19:45Z.
    clock = Date.parse("2026-11-30T19:45:00Z");
    const second = await pushController(fleet.dir, fleet.kubeconfig, {}, { now: () => clock });
    await until(second, "east=1 west=1");
    const status = statusFile(fleet.dir, "status/autoscaling/cron/shop.web-peak.yaml");
    expect(status).toMatchObject({ cronScale: "web-peak", target: "Deployment web", replicas: 2 });
    expect(asList(status.runs)).toEqual([
      {
        rule: "morning",
        firedAt: "2026-11-30T07:00:00.000Z",
        ranAt: "2026-11-30T07:00:30.000Z",
        outcome: "applied",
        result: "total 3 → 6",
      },
      {
        rule: "evening",
        firedAt: "2026-11-30T19:00:00.000Z",
        ranAt: "2026-11-30T19:45:00.000Z",
        outcome: "applied",
        result: "total 6 → 2",
      },
    ]);
    expect(status.nextRun).toBe("2026-12-01T07:00:00.000Z");
    const message = gitIn(fleet.dir, "log", "--format=%B", "-1", "--grep=evening", "gitfleet/status");
    expect(message).toContain("cronscale web-peak/evening: total 6 → 2 (missed while gitfleet was down");
    // And a third controller at the same time runs nothing again.
    const third = await pushController(fleet.dir, fleet.kubeconfig, {}, { now: () => clock });
    const before = subjects().filter((s) => s.startsWith("autoscale")).length;
    await third.round();
    expect(subjects().filter((s) => s.startsWith("autoscale")).length).toBe(before);
  }, 60_000);
});
