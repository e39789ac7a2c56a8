import { execFile, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { inventoryFromData } from "../../src/sync/inventory.js";
import { BASE_SPEC, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";
import { branchFiles, commitTree, createRepo, tempDir } from "../helpers/git-repo.js";
import { writeKubeconfig } from "../helpers/member.js";

/**
 * Kill the controller in the middle of a sync and start it again: the members end holding exactly
 * the rendered tree — every object once, nothing gitfleet created left outside its inventory, nothing
 * of a removed app left behind. Real `gitfleet reconcile --once` processes are SIGKILLed at spread-out
 * moments while they apply to slowed-down simulated members.
 */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
let dir: string;
let cleanup: () => void;
let members: SimulatedMember[];
let kubeconfig: string;

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-crash-sync-"));
  mkdirSync(join(dir, "fleet"));
  members = await Promise.all(BASE_SPEC.clusters.map(({ name }) => startMember({ name })));
  for (const member of members) member.faults.delayMs = 10;
  kubeconfig = writeKubeconfig(join(dir, "kubeconfig"), members);
});
afterEach(async () => {
  await Promise.all(members.map((m) => m.close()));
  cleanup();
});

const args = () => [
  BIN,
  "reconcile",
  "--repo",
  join(dir, "fleet"),
  "--once",
  "--log-level",
  "error",
  "--kubeconfig",
  kubeconfig,
];

// Runs the controller and SIGKILLs it once the members hold `threshold` more gitfleet objects than
// before: in the middle of applying, by construction.
function killedMidSync(threshold: number): Promise<string> {
  return new Promise((resolve) => {
    const before = managedCount();
    const child = spawn(process.execPath, args(), { stdio: "ignore" });
    const poll = setInterval(() => {
      if (managedCount() !== before + threshold && managedCount() < before + threshold) return;
      child.kill("SIGKILL");
      clearInterval(poll);
    }, 2);
    child.on("exit", (code, signal) => {
      clearInterval(poll);
      resolve(signal ?? String(code));
    });
  });
}

// Objects with gitfleet's app label in all members, counted in process (no HTTP, so polling is cheap).
function managedCount(): number {
  let count = 0;
  for (const member of members)
    for (const path of ["/apis/apps/v1/deployments", "/api/v1/configmaps"]) {
      const answer = member.api.handle({
        method: "GET",
        path,
        query: new URLSearchParams({ labelSelector: "gitfleet.io/app" }),
        contentType: "",
        body: undefined,
      });
      count += asList(asMap(answer.body).items).length;
    }
  return count;
}

function toTheEnd(): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, args(), { encoding: "utf8", timeout: 60_000 }, (error, stdout) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }),
    ),
  );
}

async function get(member: SimulatedMember, path: string): Promise<JsonMap> {
  return (await (await fetch(`${member.url}${path}`)).json()) as JsonMap;
}

// Every object in a member carrying gitfleet's label, by identity, across the kinds the fleet renders.
async function managedIn(member: SimulatedMember): Promise<string[]> {
  const found: string[] = [];
  for (const [path, group, kind] of [
    ["/apis/apps/v1/deployments", "apps", "Deployment"],
    ["/api/v1/configmaps", "", "ConfigMap"],
    [
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      "apiextensions.k8s.io",
      "CustomResourceDefinition",
    ],
    ["/apis/example.com/v1/widgets", "example.com", "Widget"],
  ] as const) {
    const list = await fetch(`${member.url}${path}?labelSelector=gitfleet.io%2Fapp`);
    if (list.status === 404) continue;
    for (const item of asList(asMap(await list.json()).items)) {
      const metadata = asMap(asMap(item).metadata);
      found.push(`${group}/${kind}/${String(metadata.namespace ?? "")}/${String(metadata.name)}`);
    }
  }
  return found.sort();
}

// What rendered/<cluster>/ on the status branch holds, by identity.
function renderedFor(cluster: string): string[] {
  const identities: string[] = [];
  for (const [path, text] of branchFiles(join(dir, "fleet"), "gitfleet/status")) {
    if (!path.startsWith(`rendered/${cluster}/`)) continue;
    const kind = /^kind: (.+)$/m.exec(text)?.[1] ?? "";
    const apiVersion = /^apiVersion: (.+)$/m.exec(text)?.[1] ?? "";
    const name = /^ {2}name: (.+)$/m.exec(text)?.[1] ?? "";
    const namespace = /^ {2}namespace: (.+)$/m.exec(text)?.[1] ?? "";
    identities.push(
      `${apiVersion.includes("/") ? apiVersion.split("/")[0] : ""}/${kind}/${namespace}/${name}`,
    );
  }
  return identities.sort();
}

async function expectConverged(): Promise<void> {
  for (const member of members) {
    const rendered = renderedFor(member.name);
    expect(await managedIn(member)).toEqual(rendered);
    const configMap = await get(member, "/api/v1/namespaces/gitfleet-system/configmaps/gitfleet-inventory");
    const inventory = inventoryFromData(asMap(configMap.data)).inventory;
    expect([...inventory.keys()].sort()).toEqual(rendered);
    expect([...inventory.values()].every((entry) => entry.uid !== "")).toBe(true);
  }
}

describe("killing the controller mid-sync", () => {
  it("converges after kills during the first sync and during a change that removes an app", async () => {
    createRepo(join(dir, "fleet"), fleetFiles(BASE_SPEC));
    const outcomes: string[] = [];
    outcomes.push(await killedMidSync(1));
    const partial = managedCount();
    for (const threshold of [2, 3]) outcomes.push(await killedMidSync(threshold));
    expect(await toTheEnd()).toMatchObject({ code: 0 });
    await expectConverged();
    // The kills left the members holding part of the fleet.
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(managedCount());

    // A change: api removed (allowed past the budget), web rescaled, cart moved.
    const next: FleetSpec = {
      ...BASE_SPEC,
      apps: BASE_SPEC.apps
        .filter((a) => a.name !== "api")
        .map((a) =>
          a.name === "web" ? { ...a, replicas: 9 } : a.name === "cart" ? { ...a, clusters: ["east"] } : a,
        ),
    };
    const files = new Map(fleetFiles(next));
    files.set(
      "fleet.yaml",
      new TextEncoder().encode(
        "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: t\nspec:\n  pruning:\n    maxDeletionPercent: 100\n",
      ),
    );
    commitTree(join(dir, "fleet"), files, "remove api, move cart");
    // Kill while the change applies (web's and cart's new objects count as more).
    for (const threshold of [1, 2]) outcomes.push(await killedMidSync(threshold));
    expect(await toTheEnd()).toMatchObject({ code: 0 });
    await expectConverged();
    const east = members.find((m) => m.name === "east") as SimulatedMember;
    expect((await fetch(`${east.url}/apis/apps/v1/namespaces/shop/deployments/api`)).status).toBe(404);
    expect(outcomes.slice(0, 3)).toEqual(["SIGKILL", "SIGKILL", "SIGKILL"]);
  });
});
