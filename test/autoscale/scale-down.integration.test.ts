import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";
import { twoClusterFiles, weightedPlacement } from "../helpers/two-clusters.js";

// Targeted scale-down of an OpenKruise CloneSet on simulated members: a request in Git names pods in
// one cluster; exactly those pods go, that cluster runs that many fewer, the other cluster is not
// touched, and the request runs once — across more reconciles and a restart.

const fleet = membersPerTest("gitfleet-scaledown-", ["east", "west"]);

const CRD = readFileSync(new URL("../../example-repo/apps/arena/crd-cloneset.yaml", import.meta.url), "utf8");
const INTERPRETER = readFileSync(
  new URL("../../example-repo/interpreters/cloneset.yaml", import.meta.url),
  "utf8",
);

const CLONESET = `apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: game
spec:
  replicas: 6
  selector:
    matchLabels: {app: game}
  scaleStrategy:
    podsToDelete: []
  template:
    metadata:
      labels: {app: game}
    spec:
      containers:
        - name: server
          image: registry.example/game:1
          resources: {requests: {cpu: 100m, memory: 64Mi}}
`;

const FILES = {
  ...twoClusterFiles("game", "games"),
  "interpreters/cloneset.yaml": INTERPRETER,
  "apps/game/crd.yaml": CRD,
  "apps/game/cloneset.yaml": CLONESET,
  "placements/game.yaml": weightedPlacement("game", { east: 1, west: 1 }),
};

const request = (pods: readonly string[]) => `apiVersion: gitfleet.io/v1alpha1
kind: ScaleDownRequest
metadata:
  name: drain-bad-servers
  namespace: games
spec:
  scaleTargetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: game}
  cluster: east
  pods: [${pods.join(", ")}]
`;

const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const subjects = () => gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status").split("\n");

/** The CloneSet's running pods in a member: name → uid. */
async function pods(name: string): Promise<Map<string, string>> {
  const list = await liveObject(member(name), "/api/v1/namespaces/games/pods?labelSelector=app%3Dgame");
  const running = asList(list?.items)
    .map((p) => asMap(p as JsonMap))
    .filter((p) => !asMap(p.metadata).deletionTimestamp && asMap(p.status).phase === "Running");
  return new Map(running.map((p) => [String(asMap(p.metadata).name), String(asMap(p.metadata).uid)]));
}

async function until(
  controller: Awaited<ReturnType<typeof pushController>>,
  done: () => Promise<boolean>,
  what: string,
) {
  for (let i = 0; i < 100; i++) {
    await controller.round();
    if (await done()) return;
    await sleep(100);
  }
  throw new Error(
    `${what} not reached; east ${[...(await pods("east")).keys()]}, west ${[...(await pods("west")).keys()]}`,
  );
}

describe("targeted scale-down on simulated members", () => {
  it("removes exactly the named pods from one cluster, leaves the other untouched, and runs once", async () => {
    createRepo(fleet.dir, fileTreeFromText(FILES));
    const first = await pushController(fleet.dir, fleet.kubeconfig);
    await until(
      first,
      async () => (await pods("east")).size === 3 && (await pods("west")).size === 3,
      "3 + 3 running",
    );
    const east = await pods("east");
    const west = await pods("west");
    const [bad1, bad2, good] = [...east.keys()].sort();

    commitTree(
      fleet.dir,
      fileTreeFromText({ ...FILES, "autoscaling/drain.yaml": request([bad1 ?? "", bad2 ?? ""]) }),
      "Drain two bad game servers in east",
    );
    await until(first, async () => (await pods("east")).size === 1, "east down to 1");
    expect([...(await pods("east"))]).toEqual([[good, east.get(good ?? "")]]);
    // west: the same pods, not one restarted.
    expect(await pods("west")).toEqual(west);
    const live = await liveObject(
      member("east"),
      "/apis/apps.kruise.io/v1alpha1/namespaces/games/clonesets/game",
    );
    expect(asMap(live?.spec)).toMatchObject({ replicas: 1, scaleStrategy: { podsToDelete: [bad1, bad2] } });
    expect(
      asMap(
        (await liveObject(member("west"), "/apis/apps.kruise.io/v1alpha1/namespaces/games/clonesets/game"))
          ?.spec,
      ).replicas,
    ).toBe(3);
    expect(statusFile(fleet.dir, "status/autoscaling/scaledown/games.drain-bad-servers.yaml")).toMatchObject({
      state: "Done",
      cluster: "east",
      pods: [bad1, bad2],
      from: 6,
      total: 4,
      clusters: { east: 1, west: 3 },
    });
    expect(subjects()).toContain(
      "autoscale: drain-bad-servers: scale-down 6 → 4 (2 named pods off east) east=3→1",
    );

    // More reconciles, and a restarted controller: nothing is repeated, nothing comes back.
    for (let i = 0; i < 3; i++) await first.round();
    const second = await pushController(fleet.dir, fleet.kubeconfig);
    for (let i = 0; i < 3; i++) {
      await second.round();
      // A fixed wait: the members get time to act on anything repeated, and nothing may change.
      await sleep(100);
    }
    expect((await pods("east")).size).toBe(1);
    expect(await pods("west")).toEqual(west);
    expect(subjects().filter((s) => s.includes("drain-bad-servers")).length).toBe(1);
  }, 60_000);
});
