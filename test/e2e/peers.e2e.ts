import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import type { RenderedObject } from "../../src/render/render-result.js";
import { simulatedKubeconfig } from "../../src/sim/kubeconfig.js";
import { type MemberRequest, type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { tempDir } from "../helpers/git-repo.js";
import { type ControlPlanes, startControlPlanes } from "./cluster/control-plane.js";
import { changedConfigMaps, GITFLEET_CLUSTER, peerFleet } from "./peers/peer-fleet.js";
import {
  applyWithFlux,
  applyWithFluxAsync,
  applyWithKubectl,
  commitTree,
  GitfleetPeer,
  liveObjects,
  type StepRun,
  writeRendered,
} from "./peers/peer-tools.js";

/**
 * The peer comparison's correctness check (its figures come from `npm run bench:peers`): gitfleet's
 * sync, kubectl's server-side apply and Flux's server-side apply manager each apply the same objects
 * to a real kube-apiserver of their own — first apply, a re-apply with nothing to change, a change of
 * 1% — and every tool ends with the same live objects, compared field by field from the server.
 */

const SIZE = { namespaces: 30 };
const KUBECTL = "peer-kubectl";
const FLUX = "peer-flux";
const here = fileURLToPath(new URL(".", import.meta.url));
// The fake kubelets run as a process of their own, from the build (npm run test:e2e builds first).
const FAKE_KUBELETS = fileURLToPath(new URL("../../dist/test/e2e/peers/fake-kubelets.js", import.meta.url));
const build = (script: string) =>
  execFileSync("bash", [join(here, script)], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;

let planes: ControlPlanes;
let kubelets: ChildProcess | undefined;
let simulated: SimulatedMember | undefined;
// What Flux sent the simulated member, by method (and dry run or not).
const simRequests = new Map<string, number>();
let repo: { dir: string; cleanup: () => void };
let rendered: readonly RenderedObject[] = [];
const runs = new Map<string, StepRun[]>();

beforeAll(async () => {
  const binDir = build("cluster/build.sh");
  const flux = build("peers/flux-ssa/build.sh");
  planes = await startControlPlanes({ binDir, names: [GITFLEET_CLUSTER, KUBECTL, FLUX] });
  kubelets = spawn(process.execPath, [FAKE_KUBELETS, planes.kubeconfig, GITFLEET_CLUSTER, KUBECTL, FLUX], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    kubelets?.on("exit", (code) => reject(new Error(`the fake kubelets exited with ${String(code)}`)));
    kubelets?.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve();
    });
  });
  repo = tempDir("gitfleet-e2e-peers-");
  const fleet = join(repo.dir, "fleet");
  const before = join(repo.dir, "before");
  const after = join(repo.dir, "after");
  commitTree(fleet, peerFleet(SIZE), "the comparison's objects");
  const gitfleet = await GitfleetPeer.open(fleet, planes.kubeconfig);
  const own: StepRun[] = [await gitfleet.step()];
  writeRendered(gitfleet.rendered(), before);
  own.push(await gitfleet.step());
  commitTree(fleet, peerFleet(SIZE, changedConfigMaps(SIZE, 1)), "1% changed");
  own.push(await gitfleet.step());
  rendered = gitfleet.rendered().filter((o) => o.cluster === GITFLEET_CLUSTER);
  writeRendered(rendered, after);
  await gitfleet.close();
  runs.set("gitfleet", own);
  runs.set(
    "kubectl",
    [before, before, after].map((d) => applyWithKubectl(planes.kubeconfig, KUBECTL, d)),
  );
  runs.set(
    "flux",
    [before, before, after].map((d) => applyWithFlux(flux, planes.kubeconfig, FLUX, d, 8)),
  );
  // Flux again, against a simulated member with its world: its dry runs must write nothing there.
  simulated = await startMember({
    name: "peer-flux-sim",
    world: { readyDelayMs: 20 },
    onRequest: (request: MemberRequest) => {
      const key = `${request.method}${request.path.includes("dryRun=All") ? " dryRun" : ""}`;
      simRequests.set(key, (simRequests.get(key) ?? 0) + 1);
    },
  });
  const simConfig = join(repo.dir, "sim.kubeconfig");
  writeFileSync(simConfig, simulatedKubeconfig([simulated]));
  const onSim: StepRun[] = [];
  for (const d of [before, before, after]) {
    simRequests.clear();
    onSim.push(await applyWithFluxAsync(flux, simConfig, "peer-flux-sim", d, 8));
  }
  runs.set("flux-on-simulated-member", onSim);
}, 900_000);

afterAll(async () => {
  kubelets?.removeAllListeners("exit");
  kubelets?.kill("SIGTERM");
  await simulated?.close();
  await planes?.stop();
  repo?.cleanup();
}, 60_000);

// What differs between clusters however an object was applied: the Service's allocated IPs, and the
// revision the Deployment controller writes when it gets to it.
function sameEverywhere(object: JsonMap | undefined): JsonMap | undefined {
  if (!object) return undefined;
  const metadata = asMap(object.metadata);
  const annotations = Object.fromEntries(
    Object.entries(asMap(metadata.annotations)).filter(([k]) => !k.startsWith("deployment.kubernetes.io/")),
  );
  const { clusterIP: _ip, clusterIPs: _ips, ...spec } = asMap(object.spec);
  return {
    ...object,
    metadata: { ...metadata, annotations },
    ...(object.kind === "Service" ? { spec } : {}),
  };
}

describe("gitfleet, kubectl and Flux apply the same objects to real API servers", () => {
  it("every tool ends with the same live objects, field by field", async () => {
    expect(rendered.length).toBe(SIZE.namespaces * 10 + 2);
    const live = await Promise.all(
      [GITFLEET_CLUSTER, KUBECTL, FLUX].map((c) => liveObjects(planes.kubeconfig, c, rendered)),
    );
    const [own, kubectl, flux] = live.map(
      (m) => new Map([...m].map(([identity, object]) => [identity, sameEverywhere(object)])),
    );
    for (const object of rendered) {
      const mine = own?.get(object.identity);
      expect(mine, `${object.identity} in gitfleet's cluster`).toBeDefined();
      expect(kubectl?.get(object.identity), `${object.identity}: kubectl's`).toEqual(mine);
      expect(flux?.get(object.identity), `${object.identity}: Flux's`).toEqual(mine);
    }
    // The 1% change reached every cluster.
    const edited = rendered.filter(
      (o) => o.object.kind === "ConfigMap" && asMap(o.object.data).LOG_LEVEL === "debug",
    );
    expect(edited.length).toBe(changedConfigMaps(SIZE, 1).length);
    for (const o of edited) expect(asMap(flux?.get(o.identity)?.data).LOG_LEVEL).toBe("debug");
  });

  it("gitfleet and Flux say what each step did: all created, then nothing, then only what changed", () => {
    const total = SIZE.namespaces * 10 + 2;
    const changed = changedConfigMaps(SIZE, 1).length;
    expect(runs.get("gitfleet")?.map((r) => r.actions)).toEqual([
      { created: total },
      { unchanged: total },
      { configured: changed, unchanged: total - changed },
    ]);
    expect(runs.get("flux")?.map((r) => r.actions)).toEqual([
      { created: total },
      { unchanged: total },
      { configured: changed, unchanged: total - changed },
    ]);
  });

  it("Flux sees on a simulated member what it sees on a real API server: its dry runs write nothing", () => {
    const total = SIZE.namespaces * 10 + 2;
    const changed = changedConfigMaps(SIZE, 1).length;
    expect(runs.get("flux-on-simulated-member")?.map((r) => r.actions)).toEqual(
      runs.get("flux")?.map((r) => r.actions),
    );
    // The last step: a dry run of every object, then a write of the changed ones only.
    expect(simRequests.get("PATCH dryRun")).toBeGreaterThanOrEqual(total);
    expect(simRequests.get("PATCH")).toBe(changed);
  });
});
