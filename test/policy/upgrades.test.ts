import { beforeAll, describe, expect, it } from "vitest";
import { resolveControlPlanes } from "../../src/model/controlplane/hosted-control-plane.js";
import type { FileTree } from "../../src/model/file-tree.js";
import type { ObservedState } from "../../src/model/observed-state.js";
import type { RestoreOverlay } from "../../src/model/types.js";
import {
  advanceUpgrades,
  approvedUpgradePart,
  FAILURE_GRACE_MS,
  plannedUpgrades,
  recordedUpgradeVersions,
  type UpgradesRound,
} from "../../src/policy/upgrades.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import {
  EMPTY_STATE,
  observationStep,
  observationsMoved,
  reconcileStep,
} from "../../src/reconcile/reconcile-step.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";
import { statusMessage } from "../../src/status/status-message.js";
import { upgradeStatusPath, upgradeStatusText } from "../../src/status/upgrade-file.js";
import type { ClusterSyncResult, ObjectResult } from "../../src/sync/sync-result.js";
import { HOSTED_EXAMPLE_DIR } from "../helpers/hosted-example.js";

// The controller's side of a ControlPlaneUpgrade, pure: reports read from the hosts' and hosted
// clusters' sync results (a crash loop fails a batch only once it lasted the grace), the versions the
// batches give, the control planes rendered at them, and the commit that says so.

const SOURCE = "d".repeat(40);
const T0 = Date.parse("2026-12-02T10:00:00Z");
const encoder = new TextEncoder();

const UPGRADE = `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneUpgrade
metadata:
  name: cve
spec:
  version: v1.34.2
  observe: 1m
  batches:
    - { name: canary, clusters: [pc-1], approved: true }
    - { name: rest, clusters: [pc-2], approved: false }
`;

let tree: FileTree;
beforeAll(async () => {
  const files = new Map(await readDirectoryTree(HOSTED_EXAMPLE_DIR));
  files.set("controlplanes/cve.yaml", encoder.encode(UPGRADE));
  tree = files;
});

function loaded() {
  const step = reconcileStep(EMPTY_STATE, { sourceCommit: SOURCE, tree, changedPaths: ALL });
  expect(step.valid, JSON.stringify(step.problems)).toBe(true);
  return step.state;
}

function object(cluster: string, component: string, extra: Partial<ObjectResult> = {}): ObjectResult {
  return {
    identity: `apps/Deployment/gitfleet-cp-${cluster}/${component}`,
    app: `gitfleet-cp-${cluster}`,
    action: "unchanged",
    health: { status: "Healthy" },
    ...extra,
  } as ObjectResult;
}

function result(cluster: string, objects: ObjectResult[], version?: string): ClusterSyncResult {
  return {
    cluster,
    sourceCommit: SOURCE,
    reachable: true,
    objects,
    pruned: [],
    retained: [],
    inventory: { entries: [] } as unknown as ClusterSyncResult["inventory"],
    ...(version ? { version } : {}),
  };
}

function results(pc1: { objects: ObjectResult[]; version: string }): Map<string, ClusterSyncResult> {
  return new Map([
    ["meta-1", result("meta-1", [...pc1.objects, object("pc-2", "kube-apiserver")])],
    ["pc-1", result("pc-1", [], pc1.version)],
    ["pc-2", result("pc-2", [], "v1.34.1")],
  ]);
}

function round(
  state: ReturnType<typeof loaded>,
  last: UpgradesRound | undefined,
  now: number,
  seen: Map<string, ClusterSyncResult>,
): UpgradesRound {
  const model = state.model;
  if (!model) throw new Error("no model");
  return advanceUpgrades({
    model,
    renderedCommit: SOURCE,
    previous: (name) => last?.statuses.get(name),
    results: seen,
    failingSince: last?.failingSince ?? new Map(),
    now,
  });
}

const observed = (versions: ReadonlyMap<string, string>): ObservedState => ({
  now: T0,
  clusters: new Map(),
  workloads: new Map(),
  controlPlaneVersions: versions,
});

const image = (state: ReturnType<typeof loaded>, cluster: string, component: string) => {
  const found = state.render.objects.find(
    (o) =>
      o.cluster === "meta-1" && o.path.endsWith(`/gitfleet-cp-${cluster}/apps.Deployment.${component}.yaml`),
  );
  return /image: (\S+)/.exec(found?.text ?? "")?.[1];
};

describe("control-plane upgrades in the controller's round", () => {
  it("the approved batch gives its clusters the version; the render and the model follow, and the commit says so", () => {
    const state = loaded();
    const first = round(
      state,
      undefined,
      T0,
      results({ objects: [object("pc-1", "kube-apiserver")], version: "v1.34.1" }),
    );
    expect(first.changes).toEqual([
      "cve/canary: new → Syncing (upgrading to v1.34.2)",
      "cve/rest: new → Pending (waits for batch canary)",
    ]);
    expect(Object.fromEntries(first.versions)).toEqual({ "pc-1": "v1.34.2" });
    expect(upgradeStatusText(first.statuses.get("cve") ?? fail())).toContain("state: Syncing");
    expect(image(state, "pc-1", "kube-apiserver")).toBe("registry.k8s.io/kube-apiserver:v1.34.1");
    // The new versions move the observation keys: the control plane renders again, alone.
    expect(observationsMoved(state, observed(first.versions))).toBe(true);
    const step = observationStep(state, observed(first.versions));
    expect(step.message).toEqual(statusMessage("upgrade", "upgrade: pc-1: v1.34.1 → v1.34.2"));
    expect(step.scope).toEqual(new Set(["gitfleet-cp-pc-1"]));
    for (const component of ["kube-apiserver", "kube-controller-manager", "kube-scheduler"]) {
      expect(image(step.state, "pc-1", component)).toBe(`registry.k8s.io/${component}:v1.34.2`);
      expect(image(step.state, "pc-2", component)).toBe(`registry.k8s.io/${component}:v1.34.1`);
    }
    // The sync orders the components by the states the model was generated with: the render's.
    const planes = new Map(
      resolveControlPlanes(step.state.model ?? fail(), undefined, step.state.planes).map((p) => [
        p.plane.cluster,
        p.plane.apiServer.version,
      ]),
    );
    expect(Object.fromEntries(planes)).toEqual({ "pc-1": "v1.34.2", "pc-2": "v1.34.1" });
    expect(observationsMoved(step.state, observed(first.versions))).toBe(false);
  });

  it("flags that go with the version apply with it, to the started batch's clusters only", () => {
    const flagged = new Map(tree);
    flagged.set(
      "controlplanes/cve.yaml",
      encoder.encode(
        UPGRADE.replace(
          "  observe: 1m\n",
          '  observe: 1m\n  apiServer: { extraArgs: { audit-log-maxage: "30", v: "4" } }\n',
        ),
      ),
    );
    const state = reconcileStep(EMPTY_STATE, {
      sourceCommit: SOURCE,
      tree: flagged,
      changedPaths: ALL,
    }).state;
    const step = observationStep(state, observed(new Map([["pc-1", "v1.34.2"]])));
    const args = (cluster: string) =>
      step.state.render.objects.find((o) =>
        o.path.endsWith(`/gitfleet-cp-${cluster}/apps.Deployment.kube-apiserver.yaml`),
      )?.text ?? "";
    expect(args("pc-1")).toContain('"--audit-log-maxage=30"');
    expect(args("pc-1")).toContain('"--v=4"');
    expect(args("pc-2")).toContain('"--audit-log-maxage=7"');
    expect(args("pc-2")).not.toContain('"--v=4"');
  });

  it("a crash loop fails the batch only once it lasted the grace, and says which component", () => {
    const state = loaded();
    const crashing = {
      objects: [
        object("pc-1", "kube-apiserver", {
          health: { status: "Progressing" },
          degradedReplicas: 1,
          degradedReason: "CrashLoopBackOff",
        }),
      ],
      version: "v1.34.1",
    };
    const first = round(state, undefined, T0, results(crashing));
    const early = round(state, first, T0 + FAILURE_GRACE_MS - 1, results(crashing));
    expect(early.statuses.get("cve")?.batches[0]?.state).toBe("Syncing");
    expect(early.wakeAt).toBe(T0 + FAILURE_GRACE_MS);
    const failed = round(state, early, T0 + FAILURE_GRACE_MS, results(crashing));
    expect(failed.statuses.get("cve")?.batches[0]).toMatchObject({
      state: "Failed",
      reason: "pc-1: Deployment kube-apiserver 1 CrashLoopBackOff; onFailure: Halt",
    });
    expect(failed.changes).toEqual([
      "cve/canary: Syncing → Failed (pc-1: Deployment kube-apiserver 1 CrashLoopBackOff; onFailure: Halt)",
    ]);
    // Halt keeps the version; a recovery in between starts the grace again.
    expect(Object.fromEntries(failed.versions)).toEqual({ "pc-1": "v1.34.2" });
    const healthy = round(
      state,
      first,
      T0 + 30_000,
      results({ objects: [object("pc-1", "kube-apiserver")], version: "v1.34.1" }),
    );
    expect(healthy.failingSince.size).toBe(0);
  });

  it("an upgraded control plane observes, then succeeds after its window", () => {
    const state = loaded();
    const done = {
      objects: [object("pc-1", "kube-apiserver"), object("pc-1", "kube-scheduler")],
      version: "v1.34.2",
    };
    const first = round(
      state,
      undefined,
      T0,
      results({ objects: [object("pc-1", "kube-apiserver")], version: "v1.34.1" }),
    );
    const held = round(
      state,
      first,
      T0 + 1000,
      results({
        objects: [object("pc-1", "kube-apiserver"), object("pc-1", "kube-scheduler", { action: "held" })],
        version: "v1.34.2",
      }),
    );
    expect(held.statuses.get("cve")?.batches[0]?.state).toBe("Syncing");
    const observing = round(state, held, T0 + 2000, results(done));
    expect(observing.statuses.get("cve")?.batches[0]?.state).toBe("Observing");
    expect(observing.wakeAt).toBe(T0 + 2000 + 60_000);
    const succeeded = round(state, observing, T0 + 62_000, results(done));
    expect(succeeded.statuses.get("cve")?.batches.map((b) => b.state)).toEqual([
      "Succeeded",
      "WaitingApproval",
    ]);
  });

  it("a restart reads the versions back from the status branch; an untrusted branch counts only what the source approves", () => {
    const state = loaded();
    const model = state.model;
    if (!model) throw new Error("no model");
    const first = round(
      state,
      undefined,
      T0,
      results({ objects: [object("pc-1", "kube-apiserver")], version: "v1.34.1" }),
    );
    const written = first.statuses.get("cve");
    const files = new Map([[upgradeStatusPath("cve"), written ? upgradeStatusText(written) : ""]]);
    expect(Object.fromEntries(recordedUpgradeVersions(model, files, true))).toEqual({ "pc-1": "v1.34.2" });
    // A forged status that says the unapproved batch started gives it nothing.
    const status = first.statuses.get("cve");
    if (!status) throw new Error("no status");
    const forged = { ...status, batches: status.batches.map((b) => ({ ...b, state: "Succeeded" as const })) };
    const forgedFiles = new Map([[upgradeStatusPath("cve"), upgradeStatusText(forged)]]);
    expect(Object.fromEntries(recordedUpgradeVersions(model, forgedFiles, false))).toEqual({
      "pc-1": "v1.34.2",
    });
    expect(Object.fromEntries(recordedUpgradeVersions(model, forgedFiles, true))).toEqual({
      "pc-1": "v1.34.2",
      "pc-2": "v1.34.2",
    });
    const upgrade = model.controlPlaneUpgrades[0];
    if (!upgrade) throw new Error("no upgrade");
    expect(approvedUpgradePart(upgrade, forged)?.batches.map((b) => b.name)).toEqual(["canary"]);
  });

  it("the plan of the approving change says which batch starts at merge and renders it", () => {
    const state = loaded();
    const model = state.model;
    if (!model) throw new Error("no model");
    const planned = plannedUpgrades(model, new Map(), T0);
    expect(Object.fromEntries(planned.versions)).toEqual({ "pc-1": "v1.34.2" });
    expect(planned.changes[0]).toBe("cve/canary: new → Syncing (upgrading to v1.34.2)");
  });
});

function fail(): never {
  throw new Error("no model");
}

describe("the commit of control planes that moved", () => {
  const stopping: RestoreOverlay = { name: "r1", snapshot: "etcd-pc-2-20261202.db", phase: "Stopping" };
  const planes = (
    versions: ReadonlyMap<string, string>,
    restores: ReadonlyMap<string, RestoreOverlay>,
  ): ObservedState => ({ ...observed(versions), controlPlaneRestores: restores });

  it.each([
    {
      case: "an etcd restore alone is a restore event, not an upgrade",
      versions: new Map<string, string>(),
      restores: new Map([["pc-2", stopping]]),
      message: statusMessage("restore", "restore: pc-2: r1 Stopping"),
    },
    {
      case: "an upgrade and a restore in one step: the upgrade names the commit, the restore is carried",
      versions: new Map([["pc-1", "v1.34.2"]]),
      restores: new Map([["pc-2", stopping]]),
      message: {
        ...statusMessage("upgrade", "upgrade: pc-1: v1.34.1 → v1.34.2"),
        carried: [[{ kind: "restore", line: "restore: pc-2: r1 Stopping" }]],
      },
    },
  ])("$case", ({ versions, restores, message }) => {
    const step = observationStep(loaded(), planes(versions, restores));
    expect(step.message).toEqual(message);
    expect(step.quiet).toBeUndefined();
  });

  it("a restore that moves on to its next phase is a restore event again", () => {
    const first = observationStep(loaded(), planes(new Map(), new Map([["pc-2", stopping]])));
    const next = observationStep(
      first.state,
      planes(new Map(), new Map([["pc-2", { ...stopping, phase: "Restoring" }]])),
    );
    expect(next.message).toEqual(statusMessage("restore", "restore: pc-2: r1 Restoring"));
  });
});
