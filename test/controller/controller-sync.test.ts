import { describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import type { Controller } from "../../src/controller/controller.js";
import { SIMULATED_VERSION } from "../../src/sim/discovery.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { BASE_SPEC, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import {
  liveObject,
  membersPerTest,
  pushController,
  statusFile as statusFileOf,
} from "../helpers/sync-fleet.js";

/**
 * The whole push path: commits in a real repository, the reconciler writing the status branch, the
 * syncer applying it to four simulated members over HTTP, and the members' observations committed
 * back. The fleet is the one the reconcile tests use (five apps, a CRD and its custom resource).
 */
const fleet = membersPerTest(
  "gitfleet-sync-",
  BASE_SPEC.clusters.map((c) => c.name),
);

const controller = () => pushController(fleet.dir, fleet.kubeconfig);
const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const live = (cluster: string, path: string) => liveObject(member(cluster), path);
const statusFile = (path: string) => statusFileOf(fleet.dir, path);

// Resyncs until every app is Healthy in every cluster it is rendered to (as status/apps/ records it).
async function converge(
  control: Controller,
  round: () => Promise<void>,
  apps: readonly string[],
): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    control.resyncSoon();
    await round();
    const healthy = apps.every((app) =>
      Object.values(asMap(statusFile(appStatusPath(app)).observed)).every(
        (c) => asMap(c).health === "Healthy",
      ),
    );
    if (healthy) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `apps did not converge: ${JSON.stringify(apps.map((a) => statusFile(appStatusPath(a)).observed))}`,
  );
}

const APPS = ["web", "api", "cart", "jobs", "docs", "widgets", "gadgets"];

describe("push-mode sync with the controller", () => {
  it("syncs the fleet, records observed status and inventories, and converges to Healthy", async () => {
    const source = createRepo(fleet.dir, fleetFiles(BASE_SPEC));
    const { controller: control, round } = await controller();
    await round();
    const web = await live("east", "/apis/apps/v1/namespaces/shop/deployments/web");
    expect(asMap(web?.spec).replicas).toBe(2);
    expect(asMap(asMap(web?.metadata).labels)["app.kubernetes.io/managed-by"]).toBe("gitfleet");
    // The CRD and its custom resource, in one sync.
    expect(await live("east", "/apis/example.com/v1/namespaces/default/widgets/gadget")).toBeDefined();
    await converge(control, round, APPS);
    const status = statusFile(appStatusPath("web"));
    expect(asMap(status.observed).east).toMatchObject({
      health: "Healthy",
      syncedCommit: source,
      ready: { "Deployment shop/web": "2/2" },
    });
    const cluster = asMap(statusFile("status/clusters/east.yaml").observed);
    expect(cluster).toMatchObject({ reachable: true, syncedCommit: source, conflicts: 0, failed: 0 });
    // The member's version, as its /version reports it.
    expect(cluster.kubernetesVersion).toBe(SIMULATED_VERSION.gitVersion);
    const inventory = statusFile("status/inventory/east.yaml");
    expect(inventory.objects).toBe(cluster.inventory);
    expect(inventory.entries).toContainEqual(
      expect.objectContaining({ apiVersion: "apps/v1", kind: "Deployment", namespace: "shop", name: "web" }),
    );
    // Pods really run in the member.
    const pods = asMap(await live("east", "/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb"));
    expect((pods.items as JsonMap[]).filter((p) => asMap(p.status).phase === "Running")).toHaveLength(2);
    // Observed status commits say what happened and name the source commit.
    const log = gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status");
    // (The fleet's Migration "move" names its batch's state changes after the sync's subject.)
    expect(log).toMatch(
      /^sync: east Healthy, north Healthy, south Healthy, west Healthy(; migration: .+)?$/m,
    );
    // Its batch has no observation window of its own: the default 10 minutes begins.
    expect(log).toMatch(/; migration: move\/first: Syncing → Observing$/m);
    // No change in the fleet.members: another round commits nothing.
    const tip = gitIn(fleet.dir, "rev-parse", "gitfleet/status");
    control.resyncSoon();
    await round();
    expect(gitIn(fleet.dir, "rev-parse", "gitfleet/status")).toBe(tip);
  });

  it("applies a change, prunes a removed app, and touches nothing on an invalid commit", async () => {
    createRepo(fleet.dir, fleetFiles(BASE_SPEC));
    const { round } = await controller();
    await round();
    const withWebAt9: FleetSpec = {
      ...BASE_SPEC,
      apps: BASE_SPEC.apps.map((a) => (a.name === "web" ? { ...a, replicas: 9 } : a)),
    };
    commitTree(fleet.dir, fleetFiles(withWebAt9), "web to 9");
    await round();
    expect(asMap((await live("east", "/apis/apps/v1/namespaces/shop/deployments/web"))?.spec).replicas).toBe(
      3,
    );

    // A broken commit: the fleet.members keep the last valid render, nothing is pruned.
    commitTree(
      fleet.dir,
      fleetFiles({ ...withWebAt9, apps: withWebAt9.apps.filter((a) => a.name !== "api"), broken: "web" }),
      "broken",
    );
    await round();
    expect(await live("east", "/apis/apps/v1/namespaces/shop/deployments/api")).toBeDefined();
    expect(statusFile("status/source.yaml").valid).toBe(false);

    // The same removal, valid: a third of east's and west's inventories, over the 30% budget.
    const withoutApi = { ...withWebAt9, apps: withWebAt9.apps.filter((a) => a.name !== "api") };
    commitTree(fleet.dir, fleetFiles(withoutApi), "remove api");
    await round();
    expect(await live("east", "/apis/apps/v1/namespaces/shop/deployments/api")).toBeDefined();
    const tokens = ["east", "west"].map((cluster) => {
      const blocked = asMap(asMap(statusFile(`status/clusters/${cluster}.yaml`).observed).pruneBlocked);
      expect(blocked.reasons).toEqual([
        expect.stringMatching(/^would delete 2 of [56] objects \(\d+%\), more than the 30% budget$/),
      ]);
      return String(blocked.token);
    });
    // A reviewed commit allows exactly these deletions.
    const allowed = new Map(fleetFiles(withoutApi));
    allowed.set(
      "fleet.yaml",
      new TextEncoder().encode(
        `apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: test\nspec:\n  pruning:\n    allowPrune: "${tokens.join(" ")}"\n`,
      ),
    );
    commitTree(fleet.dir, allowed, "allow pruning api");
    await round();
    for (const cluster of ["east", "west"]) {
      expect(await live(cluster, "/apis/apps/v1/namespaces/shop/deployments/api")).toBeUndefined();
      expect(await live(cluster, "/api/v1/namespaces/shop/configmaps/api")).toBeUndefined();
      expect(
        (statusFile(`status/inventory/${cluster}.yaml`).entries as JsonMap[]).some((e) => e.name === "api"),
      ).toBe(false);
    }
    expect(await live("east", "/apis/apps/v1/namespaces/shop/deployments/web")).toBeDefined();
    expect(gitIn(fleet.dir, "log", "-1", "--format=%B", "gitfleet/status")).toMatch(
      /east: \d+ applied, 2 pruned/,
    );
  });

  it("corrects drift on the next resync and records it", async () => {
    createRepo(fleet.dir, fleetFiles(BASE_SPEC));
    const { round } = await controller();
    await round();
    const edited = await fetch(
      `${member("east").url}/api/v1/namespaces/shop/configmaps/web?fieldManager=kubectl-edit`,
      {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ data: { LEVEL: "debug" } }),
      },
    );
    expect(edited.status).toBe(200);
    await round();
    expect(asMap((await live("east", "/api/v1/namespaces/shop/configmaps/web"))?.data).LEVEL).toBe("info");
    const problems = asMap(asMap(statusFile(appStatusPath("web")).observed).east).problems;
    expect(problems).toEqual([{ object: "ConfigMap shop/web", action: "corrected", drift: ["data.LEVEL"] }]);
  });

  it("keeps syncing the other fleet.members while one is down, and catches it up when it returns", async () => {
    createRepo(fleet.dir, fleetFiles(BASE_SPEC));
    const { controller: control, round } = await controller();
    await member("west").faults.down();
    await round();
    expect(await live("east", "/apis/apps/v1/namespaces/shop/deployments/web")).toBeDefined();
    expect(asMap(statusFile("status/clusters/west.yaml").observed)).toMatchObject({ reachable: false });
    expect(asMap(asMap(statusFile(appStatusPath("web")).observed).west).health).toBe("Unknown");
    expect(asMap(asMap(statusFile(appStatusPath("web")).observed).east).syncedCommit).toMatch(
      /^[0-9a-f]{40}$/,
    );
    expect(gitIn(fleet.dir, "log", "-1", "--format=%s", "gitfleet/status")).toMatch(/west unreachable/);
    await member("west").faults.up();
    control.resyncSoon();
    await round();
    expect(await live("west", "/apis/apps/v1/namespaces/shop/deployments/web")).toBeDefined();
    expect(asMap(statusFile("status/clusters/west.yaml").observed)).toMatchObject({ reachable: true });
  });

  it("reports a hand-made object that blocks a rendered one, and never prunes it", async () => {
    createRepo(fleet.dir, fleetFiles(BASE_SPEC));
    const { round } = await controller();
    await fetch(`${member("south").url}/api/v1/namespaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "batch" } }),
    });
    await fetch(`${member("south").url}/api/v1/namespaces/batch/configmaps`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: "docs",
          namespace: "batch",
          labels: { "app.kubernetes.io/managed-by": "gitfleet", "gitfleet.io/app": "docs" },
        },
        data: { LEVEL: "hand-made" },
      }),
    });
    await round();
    const docs = asMap(asMap(statusFile(appStatusPath("docs")).observed).south);
    expect(docs.problems).toEqual([
      expect.objectContaining({
        object: "ConfigMap batch/docs",
        action: "conflict",
        error: expect.stringMatching(/did not create it/),
      }),
    ]);
    // Removing docs from the fleet prunes what gitfleet made and leaves the hand-made ConfigMap.
    commitTree(
      fleet.dir,
      fleetFiles({ ...BASE_SPEC, apps: BASE_SPEC.apps.filter((a) => a.name !== "docs") }),
      "remove docs",
    );
    await round();
    expect(asMap((await live("south", "/api/v1/namespaces/batch/configmaps/docs"))?.data).LEVEL).toBe(
      "hand-made",
    );
  });
});
