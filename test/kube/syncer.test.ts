import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveConnections } from "../../src/kube/connections.js";
import { Syncer } from "../../src/kube/syncer.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { createLogger } from "../../src/log/logger.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import type { ClusterSyncResult } from "../../src/sync/sync-result.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { tempDir } from "../helpers/git-repo.js";
import { writeKubeconfig } from "../helpers/member.js";

/** The syncer's queues: each cluster on its own, and no more than maxClusters syncing at once. */
let root: { dir: string; cleanup: () => void };
let members: SimulatedMember[];

beforeEach(async () => {
  root = tempDir("gitfleet-syncer-");
  members = await Promise.all(BASE_SPEC.clusters.map(({ name }) => startMember({ name })));
});
afterEach(async () => {
  await Promise.all(members.map((m) => m.close()));
  root.cleanup();
});

async function syncAll(maxClusters: number): Promise<string[]> {
  const kubeconfig = writeKubeconfig(join(root.dir, "kubeconfig"), members);
  // Every write in any member, in the order they happen, by cluster.
  const writes: string[] = [];
  const stops = members.map((m) =>
    m.api.store.watch(Number(m.api.store.currentVersion()), () => writes.push(m.name)),
  );
  const { model } = loadFleet(fleetFiles(BASE_SPEC));
  if (!model) throw new Error("the fleet does not validate");
  const syncer = new Syncer({
    connect: (fleet) => resolveConnections(fleet.clusters, { kubeconfig, env: {} }),
    logger: createLogger({ level: "silent" }),
    maxClusters,
    rollout: false,
  });
  await syncer.request({
    sourceCommit: "c".repeat(40),
    model,
    objects: renderFleet(model).objects,
    inventories: new Map(),
  });
  await syncer.idle();
  for (const stop of stops) stop?.stop();
  expect(
    [...syncer.latest().values()].every((r) => r.reachable && r.objects.every((o) => o.action === "created")),
  ).toBe(true);
  return writes;
}

// How many times the cluster being written to changes along the sequence.
const switches = (writes: readonly string[]) =>
  writes.filter((name, i) => i > 0 && name !== writes[i - 1]).length;

describe("Syncer", () => {
  it("syncs one cluster after another when maxClusters is 1", async () => {
    const writes = await syncAll(1);
    expect(new Set(writes).size).toBe(BASE_SPEC.clusters.length);
    expect(switches(writes)).toBe(BASE_SPEC.clusters.length - 1);
  });

  it("syncs clusters side by side otherwise", async () => {
    for (const member of members) member.faults.delayMs = 5;
    const writes = await syncAll(16);
    expect(switches(writes)).toBeGreaterThan(BASE_SPEC.clusters.length - 1);
  });
});

describe("Syncer capacity readings", () => {
  const world = { nodePools: [{ count: 2, allocatable: { cpu: "4", memory: "16Gi", pods: "110" } }] };

  // Two syncs of the same fleet with a member's node resized in between: the CPU each sync reports.
  async function cpuOfTwoSyncs(capacityIntervalMs: number): Promise<(number | undefined)[]> {
    for (const member of members) await member.close();
    members = await Promise.all(BASE_SPEC.clusters.map(({ name }) => startMember({ name, world })));
    const kubeconfig = writeKubeconfig(join(root.dir, "kubeconfig"), members);
    const { model } = loadFleet(fleetFiles(BASE_SPEC));
    if (!model) throw new Error("the fleet does not validate");
    const syncer = new Syncer({
      connect: (fleet) => resolveConnections(fleet.clusters, { kubeconfig, env: {} }),
      logger: createLogger({ level: "silent" }),
      rollout: false,
      capacityIntervalMs,
    });
    const [member] = members as [SimulatedMember];
    const cpu: (number | undefined)[] = [];
    for (const commit of ["c", "d"]) {
      await syncer.request({
        sourceCommit: commit.repeat(40),
        model,
        objects: renderFleet(model).objects,
        inventories: new Map(),
      });
      await syncer.idle();
      cpu.push(syncer.latest().get(member.name)?.capacity?.allocatable.cpu);
      const response = await fetch(`${member.url}/api/v1/nodes/${member.name}-node-0/status`, {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ status: { allocatable: { cpu: "12" } } }),
      });
      expect(response.status).toBe(200);
    }
    return cpu;
  }

  it("reads the member's nodes on every sync when the interval has passed", async () => {
    expect(await cpuOfTwoSyncs(0)).toEqual([8, 16]);
  });

  it("reports the last reading within the interval instead of listing every pod again", async () => {
    expect(await cpuOfTwoSyncs(3_600_000)).toEqual([8, 8]);
  });
});

describe("a sync asked for by a new render alone", () => {
  // Every request each member answers, as "METHOD path", from the moment `log` is emptied.
  const log = new Map<string, string[]>();

  async function syncerOn(): Promise<Syncer> {
    for (const member of members) await member.close();
    members = await Promise.all(
      BASE_SPEC.clusters.map(({ name }) =>
        startMember({
          name,
          onRequest: (r) =>
            log.set(name, [...(log.get(name) ?? []), `${r.method} ${decodeURIComponent(r.path)}`]),
        }),
      ),
    );
    const kubeconfig = writeKubeconfig(join(root.dir, "kubeconfig"), members);
    return new Syncer({
      connect: (fleet) => resolveConnections(fleet.clusters, { kubeconfig, env: {} }),
      logger: createLogger({ level: "silent" }),
      rollout: false,
    });
  }

  function target(tag: number, changesOnly: boolean) {
    const spec = { ...BASE_SPEC, apps: BASE_SPEC.apps.map((a) => (a.name === "api" ? { ...a, tag } : a)) };
    const { model } = loadFleet(fleetFiles(spec));
    if (!model) throw new Error("the fleet does not validate");
    return {
      sourceCommit: String(tag).repeat(40),
      model,
      objects: renderFleet(model).objects,
      inventories: new Map(),
      ...(changesOnly ? { changesOnly } : {}),
    };
  }

  // The lists of every object gitfleet manages of a kind (what a whole sync compares against).
  const lists = (cluster: string) =>
    (log.get(cluster) ?? []).filter(
      (r) => r.startsWith("GET ") && r.includes("labelSelector=app.kubernetes.io/managed-by=gitfleet"),
    );
  const writes = (cluster: string) => (log.get(cluster) ?? []).filter((r) => !r.startsWith("GET "));

  it("syncs only the apps that changed in members whose last sync was complete, and carries the others over", async () => {
    const syncer = await syncerOn();
    await syncer.request(target(1, true));
    await syncer.idle();
    // No sync was complete before: the first is whole, whatever it was asked for with.
    expect(lists("east").length).toBeGreaterThan(0);
    const first = syncer.latest().get("east");
    expect(first?.objects.filter((o) => o.app === "api").length).toBeGreaterThan(0);
    log.clear();
    await syncer.request(target(2, true));
    await syncer.idle();
    const east = syncer.latest().get("east");
    // api's objects were read one by one and its Deployment applied; no kind was listed whole.
    expect(lists("east")).toEqual([]);
    expect(writes("east").some((w) => w.includes("/deployments/api"))).toBe(true);
    expect(east?.sourceCommit).toBe("2".repeat(40));
    expect(east?.objects.find((o) => o.app === "api" && o.identity.includes("Deployment"))?.action).toBe(
      "configured",
    );
    // The other apps' results are the last sync's, as nothing done to them this time.
    const others = (r: typeof east) =>
      r?.objects.filter((o) => o.app !== "api").map((o) => [o.identity, o.health.status, o.action]);
    expect(others(east)).toEqual(others(first)?.map(([identity, health]) => [identity, health, "unchanged"]));
    // north runs no api: nothing of it changed, so only its inventory was read and written again
    // (it records the commit synced).
    expect(writes("north").map((w) => w.split("?")[0])).toEqual([
      "PATCH /api/v1/namespaces/gitfleet-system/configmaps/gitfleet-inventory",
    ]);
    expect(lists("north")).toEqual([]);
    expect(syncer.latest().get("north")?.sourceCommit).toBe("2".repeat(40));
  });

  it("syncs a member whole again after a sync that did not reach it", async () => {
    const syncer = await syncerOn();
    await syncer.request(target(1, false));
    await syncer.idle();
    const apps = (r: ClusterSyncResult | undefined) => new Set(r?.objects.map((o) => o.app));
    const everyApp = apps(syncer.latest().get("east"));
    const east = members.find((m) => m.name === "east");
    if (!east) throw new Error("no member east");
    east.faults.errorFraction = 1;
    await syncer.request(target(2, true));
    await syncer.idle();
    expect(syncer.latest().get("east")?.reachable).toBe(false);
    east.faults.errorFraction = 0;
    log.clear();
    await syncer.request(target(3, true));
    await syncer.idle();
    const result = syncer.latest().get("east");
    expect(lists("east").length).toBeGreaterThan(0);
    // Every app's objects were compared afresh: the ones api did not change are unchanged, api's
    // new image configured — nothing carried over from the sync that failed.
    expect(apps(result)).toEqual(everyApp);
    expect(everyApp.has("api")).toBe(true);
    expect(result?.objects.filter((o) => o.app !== "api").every((o) => o.action === "unchanged")).toBe(true);
    expect(result?.objects.some((o) => o.app === "api" && o.action === "configured")).toBe(true);
  });

  it("compares everything again when asked for anything else (a resync looking for drift)", async () => {
    const syncer = await syncerOn();
    await syncer.request(target(1, false));
    await syncer.idle();
    log.clear();
    await syncer.request(target(1, false));
    await syncer.idle();
    expect(lists("east").length).toBeGreaterThan(0);
    expect(
      syncer
        .latest()
        .get("east")
        ?.objects.every((o) => o.action === "unchanged"),
    ).toBe(true);
  });
});
