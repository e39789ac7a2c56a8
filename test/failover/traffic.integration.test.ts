import { describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { createRepo, gitIn } from "../helpers/git-repo.js";
import { webDeployment } from "../helpers/minimal-fleet.js";
import {
  discoveryFleetYaml,
  mcsCrdFiles,
  WEB_SERVICE,
  WEB_SERVICE_EXPORT,
} from "../helpers/service-fleet.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";
import { clusterYaml } from "../helpers/two-clusters.js";

// Traffic follows the replicas, end to end on simulated members: the simulator gives each
// LoadBalancer Service an address, the sync records it, and the controller renders the consumers'
// EndpointSlices and the DNS records from it — and withdraws a member's at once when it goes down.

const fleet = membersPerTest("gitfleet-traffic-", ["east", "west", "north"]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;

// Probes that fail twice make a cluster NotReady; NoExecute a second later.
const QUICK_HEALTH =
  "  clusterHealth:\n    failureThreshold: 2\n    successThreshold: 1\n    noExecuteAfter: 1s\n";

function fleetRepo(mode: "endpoints" | "dns") {
  return fileTreeFromText({
    "fleet.yaml": discoveryFleetYaml(mode, QUICK_HEALTH),
    "clusters/east.yaml": clusterYaml("east"),
    "clusters/west.yaml": clusterYaml("west"),
    "clusters/north.yaml": clusterYaml("north"),
    ...mcsCrdFiles(),
    "apps/web/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n",
    "apps/web/deployment.yaml": webDeployment(6, "100m"),
    "apps/web/service.yaml": WEB_SERVICE,
    "apps/web/export.yaml": WEB_SERVICE_EXPORT,
    "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  apps: [web]
  replicaScheduling:
    type: Divided
  failover:
    cluster:
      tolerationSeconds: 2
      purgeMode: Directly
`,
  });
}

async function until(
  controller: Awaited<ReturnType<typeof pushController>>,
  what: string,
  done: () => boolean | Promise<boolean>,
  rounds = 150,
): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await controller.prober.probeOnce();
    await controller.round();
    if (await done()) return;
    await sleep(100);
  }
  throw new Error(`${what}: not reached after ${rounds} rounds`);
}

async function recordClusters(): Promise<string[]> {
  const endpoint = await liveObject(
    member("north"),
    "/apis/externaldns.k8s.io/v1alpha1/namespaces/gitfleet-dns/dnsendpoints/web-shop",
  );
  return asList(asMap(endpoint?.spec).endpoints)
    .map((e) => String(asMap(e).setIdentifier))
    .sort();
}

async function readyIn(name: string): Promise<number> {
  const live = await liveObject(member(name), "/apis/apps/v1/namespaces/shop/deployments/web").catch(
    () => undefined,
  );
  return Number(asMap(live?.status).readyReplicas ?? 0);
}

describe("traffic follows the replicas on simulated members", () => {
  it("publishes each member's LoadBalancer address, withdraws a member's record when it goes down and its replicas later", async () => {
    createRepo(fleet.dir, fleetRepo("dns"));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, "a record per member", async () => (await recordClusters()).length === 3);
    // The sync recorded each member's address on the status branch.
    const observed = asMap(statusFile(fleet.dir, "status/clusters/west.yaml").observed);
    expect(asList(asMap(observed.services)["shop/web"])).toHaveLength(1);

    const downAt = Date.now();
    await member("west").faults.down();
    await until(
      controller,
      "west's record withdrawn",
      async () => JSON.stringify(await recordClusters()) === JSON.stringify(["east", "north"]),
    );
    const withdrawnMs = Date.now() - downAt;
    await until(
      controller,
      "west's replicas ready elsewhere",
      async () => (await readyIn("east")) + (await readyIn("north")) === 6,
    );
    const movedMs = Date.now() - downAt;
    const subjects = gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status");
    expect(subjects).toMatch(/DNS web\.shop\.example\.com −west/);
    expect(withdrawnMs).toBeLessThan(movedMs);
    console.log(
      `traffic: west down → its DNS record withdrawn after ${withdrawnMs} ms, its replicas ready elsewhere after ${movedMs} ms`,
    );
  });

  it("renders each consumer an EndpointSlice per member from the recorded addresses, and drops a member's when it goes down", async () => {
    createRepo(fleet.dir, fleetRepo("endpoints"));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    const slicesIn = async (cluster: string) => {
      const list = await liveObject(
        member(cluster),
        "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?labelSelector=multicluster.kubernetes.io%2Fservice-name%3Dweb",
      );
      return asList(asMap(list).items)
        .map((item) => String(asMap(asMap(item).metadata).name))
        .sort();
    };
    await until(controller, "three slices in east", async () => (await slicesIn("east")).length === 3);
    const zone = await liveObject(
      member("east"),
      "/api/v1/namespaces/kube-system/configmaps/gitfleet-clusterset-zone",
    );
    expect(String(asMap(zone?.data)["db.clusterset.local"])).toMatch(/west\.web\.shop\.svc 5 IN A \S+/);
    await member("west").faults.down();
    await until(
      controller,
      "west's slice gone from east",
      async () => JSON.stringify(await slicesIn("east")) === JSON.stringify(["web-east", "web-north"]),
    );
    const after = await liveObject(
      member("east"),
      "/api/v1/namespaces/kube-system/configmaps/gitfleet-clusterset-zone",
    );
    expect(String(asMap(after?.data)["db.clusterset.local"])).not.toContain("west.web.shop.svc");
  });
});
