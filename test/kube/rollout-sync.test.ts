import { describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { BASE_SPEC, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo } from "../helpers/git-repo.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";

/** An app's rollout across clusters, through the controller, against members with nodes and pods. */
const fleet = membersPerTest(
  "gitfleet-rollout-",
  BASE_SPEC.clusters.map((c) => c.name),
);

const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const WEB = "/apis/apps/v1/namespaces/shop/deployments/web";

// The fleet with web rolled out serially: south, then east, then west.
function serialFleet(spec: FleetSpec = BASE_SPEC) {
  const files = new Map(fleetFiles(spec));
  const placement = new TextDecoder().decode(files.get("placements/web.yaml"));
  files.set(
    "placements/web.yaml",
    new TextEncoder().encode(
      `${placement}  rollout:\n    strategy: Serial\n    order: [south, east, west]\n    timeout: 2s\n`,
    ),
  );
  return files;
}

// Rounds until web is Healthy in every cluster (or 80 rounds passed).
async function healthyEverywhere(round: () => Promise<void>): Promise<void> {
  for (let i = 0; i < 80; i++) {
    await round();
    const web = asMap(statusFile(fleet.dir, appStatusPath("web")).observed);
    if (["south", "east", "west"].every((c) => asMap(web[c]).health === "Healthy")) return;
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
}

const image = (deployment: JsonMap | undefined) =>
  String(asMap(asList(asMap(asMap(asMap(deployment?.spec).template).spec).containers)[0]).image ?? "");

describe("a Serial rollout", () => {
  it("reaches each cluster only when the one before is Healthy, and says why the others wait", async () => {
    createRepo(fleet.dir, serialFleet());
    const { round } = await pushController(fleet.dir, fleet.kubeconfig);
    await round();
    expect(await liveObject(member("south"), WEB)).toBeDefined();
    expect(await liveObject(member("east"), WEB)).toBeUndefined();
    expect(await liveObject(member("west"), WEB)).toBeUndefined();
    expect(asMap(asMap(statusFile(fleet.dir, appStatusPath("web")).observed).east)).toMatchObject({
      rollout: "waiting for south to be Healthy",
    });
    // Rounds as pods get ready: east follows south, west follows east.
    const seen: string[][] = [];
    for (let i = 0; i < 60 && !(await liveObject(member("west"), WEB)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 40));
      await round();
      const present: string[] = [];
      for (const name of ["south", "east", "west"])
        if (await liveObject(member(name), WEB)) present.push(name);
      seen.push(present);
    }
    expect(seen.map((s) => s.join(","))).toContain("south,east");
    expect(await liveObject(member("west"), WEB)).toBeDefined();
  });

  it("passes over a pull-mode cluster: the next cluster does not wait for what only an agent applies", async () => {
    const files = serialFleet();
    const east = new TextDecoder().decode(files.get("clusters/east.yaml"));
    files.set("clusters/east.yaml", new TextEncoder().encode(`${east}  connection:\n    mode: pull\n`));
    createRepo(fleet.dir, files);
    const { round } = await pushController(fleet.dir, fleet.kubeconfig);
    for (let i = 0; i < 80 && !(await liveObject(member("west"), WEB)); i++) {
      await round();
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    // west follows south; east, which no agent serves here, holds nothing back and is never written.
    expect(await liveObject(member("west"), WEB)).toBeDefined();
    expect(await liveObject(member("east"), WEB)).toBeUndefined();
    expect(asMap(asMap(statusFile(fleet.dir, appStatusPath("web")).observed).west).rollout).toBeUndefined();
  });

  it("is superseded cleanly by a newer commit: clusters not yet reached skip the older version", async () => {
    createRepo(fleet.dir, serialFleet());
    const { round } = await pushController(fleet.dir, fleet.kubeconfig);
    const healthyEverywhere = async () => {
      for (let i = 0; i < 80; i++) {
        await round();
        const web = asMap(statusFile(fleet.dir, appStatusPath("web")).observed);
        if (
          ["south", "east", "west"].every((c) => asMap(web[c]).health === "Healthy" && !asMap(web[c]).rollout)
        )
          return;
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
      throw new Error("web did not settle");
    };
    await healthyEverywhere();
    const tagged = (tag: number): FleetSpec => ({
      ...BASE_SPEC,
      apps: BASE_SPEC.apps.map((a) => (a.name === "web" ? { ...a, tag } : a)),
    });
    commitTree(fleet.dir, serialFleet(tagged(2)), "web 1.2.0");
    await round();
    expect(image(await liveObject(member("south"), WEB))).toMatch(/web:1\.2\.0$/);
    expect(image(await liveObject(member("east"), WEB))).toMatch(/web:1\.1\.0$/);
    commitTree(fleet.dir, serialFleet(tagged(3)), "web 1.3.0");
    const eastImages = new Set<string>();
    for (let i = 0; i < 80 && !image(await liveObject(member("west"), WEB)).endsWith("web:1.3.0"); i++) {
      await round();
      eastImages.add(image(await liveObject(member("east"), WEB)).replace(/^.*:/, ""));
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    expect(image(await liveObject(member("west"), WEB))).toMatch(/web:1\.3\.0$/);
    expect([...eastImages].sort()).toEqual(["1.1.0", "1.3.0"]);
  });

  it("lets a change of replicas alone (a scale, not a rollout) reach every cluster at once", async () => {
    createRepo(fleet.dir, serialFleet());
    const { round } = await pushController(fleet.dir, fleet.kubeconfig);
    await healthyEverywhere(round);
    const replicas = async (name: string) =>
      Number(asMap((await liveObject(member(name), WEB))?.spec).replicas);
    const before = await Promise.all(["south", "east", "west"].map(replicas));
    // south cannot run new pods: a rollout would stop there; a scale goes everywhere in one round.
    member("south").faults.loseNodes(3);
    const scaled: FleetSpec = {
      ...BASE_SPEC,
      apps: BASE_SPEC.apps.map((a) => (a.name === "web" ? { ...a, replicas: a.replicas * 2 } : a)),
    };
    commitTree(fleet.dir, serialFleet(scaled), "web: twice the replicas");
    await round();
    const after = await Promise.all(["south", "east", "west"].map(replicas));
    expect(after.every((n, i) => n > (before[i] ?? 0))).toBe(true);
    // An image change after it is a rollout again: held behind south, which cannot become Healthy.
    const next: FleetSpec = {
      ...scaled,
      apps: scaled.apps.map((a) => (a.name === "web" ? { ...a, tag: 2 } : a)),
    };
    commitTree(fleet.dir, serialFleet(next), "web 1.2.0");
    await round();
    expect(image(await liveObject(member("south"), WEB))).toMatch(/web:1\.2\.0$/);
    expect(image(await liveObject(member("east"), WEB))).toMatch(/web:1\.1\.0$/);
  });

  it("halts at a cluster that does not become Healthy in time, and leaves the rest on the old version", async () => {
    createRepo(fleet.dir, serialFleet());
    const { round } = await pushController(fleet.dir, fleet.kubeconfig);
    await healthyEverywhere(round);
    const before = image(await liveObject(member("west"), WEB));
    expect(before).toMatch(/web:1\.1\.0$/);
    // east loses its nodes: web's new pods cannot run there.
    member("east").faults.loseNodes(3);
    const next: FleetSpec = {
      ...BASE_SPEC,
      apps: BASE_SPEC.apps.map((a) => (a.name === "web" ? { ...a, tag: 2 } : a)),
    };
    commitTree(fleet.dir, serialFleet(next), "web 1.2.0");
    let reason = "";
    for (let i = 0; i < 100 && !reason.startsWith("rollout halted"); i++) {
      await round();
      reason = String(asMap(asMap(statusFile(fleet.dir, appStatusPath("web")).observed).west).rollout ?? "");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(reason).toBe("rollout halted: east did not become Healthy in time");
    expect(image(await liveObject(member("south"), WEB))).toMatch(/web:1\.2\.0$/);
    expect(image(await liveObject(member("east"), WEB))).toMatch(/web:1\.2\.0$/);
    expect(image(await liveObject(member("west"), WEB))).toBe(before);
  });
});
