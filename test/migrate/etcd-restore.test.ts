import { beforeAll, describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { withControlPlaneVersions } from "../../src/manifests/controlplane/generated-apps.js";
import {
  advanceRestore,
  type RestoreReport,
  type RestoreStatus,
  restoreOverlays,
} from "../../src/migrate/etcd-restore.js";
import type { FileTree } from "../../src/model/file-tree.js";
import type { EtcdRestore, FleetModel, RestoreOverlay } from "../../src/model/types.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";
import { readRestoreStatus, restoreStatusText } from "../../src/status/restore-file.js";
import { HOSTED_EXAMPLE_DIR } from "../helpers/hosted-example.js";

// A one-shot etcd restore: stop the control plane, restore the snapshot into a new data directory with
// a Job, start from it — each phase from what the host reports, each step through its status file;
// and what the render makes of each phase.

const SOURCE = "e".repeat(40);
const T0 = Date.parse("2026-12-02T11:00:00Z");
const encoder = new TextEncoder();

const RESTORE = {
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "EtcdRestore",
  metadata: { name: "r1" },
  spec: { cluster: "pc-3", snapshot: "etcd-backup-29412345-abcde.db" },
  origin: { file: "controlplanes/r1.yaml" },
} as unknown as EtcdRestore;

const IDLE: RestoreReport = { stopped: false, running: false };

function step(previous: RestoreStatus | undefined, report: RestoreReport | undefined, now = T0) {
  const outcome = advanceRestore({ restore: RESTORE, previous, sourceCommit: SOURCE, report, now });
  expect(readRestoreStatus(restoreStatusText(outcome.status))).toEqual(outcome.status);
  return outcome;
}

describe("an etcd restore's phases", () => {
  it("stops, restores, starts and succeeds, each on what the host reports", () => {
    const stopping = step(undefined, undefined);
    expect(stopping.status).toMatchObject({ phase: "Stopping", cluster: "pc-3", startedIn: SOURCE });
    expect(stopping.change).toBe("r1: new → Stopping (stopping kube-apiserver, its controllers and etcd)");
    expect(step(stopping.status, IDLE).change).toBeUndefined();
    const restoring = step(stopping.status, { ...IDLE, stopped: true });
    expect(restoring.status.phase).toBe("Restoring");
    expect(
      step(restoring.status, { ...IDLE, stopped: true, job: { health: "Progressing" } }).change,
    ).toBeUndefined();
    const starting = step(restoring.status, { ...IDLE, stopped: true, job: { health: "Healthy" } });
    expect(starting.status.phase).toBe("Starting");
    expect(step(starting.status, IDLE).change).toBeUndefined();
    const done = step(starting.status, { ...IDLE, running: true });
    expect(done.status.phase).toBe("Succeeded");
    // It ran once: nothing moves it again.
    expect(
      step(done.status, { stopped: true, running: false, job: { health: "Degraded" } }).change,
    ).toBeUndefined();
  });

  it.each([
    [
      "a Job that fails",
      "Restoring",
      { ...IDLE, stopped: true, job: { health: "Degraded", reason: "BackoffLimitExceeded" } },
      "the restore Job failed: BackoffLimitExceeded",
    ],
    [
      "etcd that cannot start from the restored data",
      "Starting",
      { ...IDLE, failure: "StatefulSet etcd 1 CrashLoopBackOff" },
      "StatefulSet etcd 1 CrashLoopBackOff; etcd runs on its data before the restore",
    ],
  ] as const)("fails on %s", (_name, phase, report, reason) => {
    const previous: RestoreStatus = {
      restore: "r1",
      cluster: "pc-3",
      snapshot: RESTORE.spec.snapshot as string,
      phase,
      since: new Date(T0).toISOString(),
      startedIn: SOURCE,
    };
    const failed = step(previous, report as RestoreReport);
    expect(failed.status).toMatchObject({ phase: "Failed", reason });
  });
});

describe("what the render takes from restores", () => {
  const status = (restore: string, phase: RestoreStatus["phase"], minute: number): RestoreStatus => ({
    restore,
    cluster: "pc-3",
    snapshot: `${restore}.db`,
    phase,
    since: new Date(T0 + minute * 60_000).toISOString(),
    startedIn: SOURCE,
  });

  it.each([
    ["none", [], undefined],
    ["one under way", [status("r1", "Restoring", 1)], { name: "r1", snapshot: "r1.db", phase: "Restoring" }],
    [
      "one that Succeeded: its data",
      [status("r1", "Succeeded", 1)],
      { name: "r1", snapshot: "r1.db", phase: "Running" },
    ],
    ["one that Failed: the data before it", [status("r1", "Failed", 1)], undefined],
    [
      "the latest that Succeeded",
      [status("r2", "Succeeded", 5), status("r1", "Succeeded", 1)],
      { name: "r2", snapshot: "r2.db", phase: "Running" },
    ],
    [
      "one under way over an earlier that Succeeded",
      [status("r1", "Succeeded", 1), status("r2", "Stopping", 5)],
      { name: "r2", snapshot: "r2.db", phase: "Stopping" },
    ],
    [
      "a failed one after one that Succeeded: the Succeeded one's data",
      [status("r1", "Succeeded", 1), status("r2", "Failed", 5)],
      { name: "r1", snapshot: "r1.db", phase: "Running" },
    ],
  ] as [string, RestoreStatus[], RestoreOverlay | undefined][])("%s", (_name, statuses, expected) => {
    expect(restoreOverlays(statuses).get("pc-3")).toEqual(expected);
  });
});

describe("a control plane rendered under restore", () => {
  let model: FleetModel;
  beforeAll(async () => {
    const tree = new Map(await readDirectoryTree(HOSTED_EXAMPLE_DIR)) as Map<string, Uint8Array>;
    tree.set(
      "controlplanes/small.yaml",
      encoder.encode(
        "apiVersion: gitfleet.io/v1alpha1\nkind: ControlPlaneClass\nmetadata:\n  name: small\nspec:\n  version: v1.34.1\n  apiServer: { replicas: 1 }\n  etcd: { version: 3.6.4-0 }\n",
      ),
    );
    tree.set(
      "clusters/pc-3.yaml",
      encoder.encode(
        "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: pc-3\nspec:\n  controlPlane:\n    host: meta-1\n    class: small\n    expose: { type: LoadBalancer }\n",
      ),
    );
    const loaded = loadFleet(tree as FileTree);
    expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
    model = loaded.model as FleetModel;
  });

  const objects = (overlay: RestoreOverlay | undefined) => {
    const restored = withControlPlaneVersions(model, {
      versions: new Map(),
      restores: overlay ? new Map([["pc-3", overlay]]) : new Map(),
    });
    const app = restored.apps.find((a) => a.name === "gitfleet-cp-pc-3");
    return new Map((app?.resources ?? []).map((r) => [`${r.kind}/${r.name}`, r.object as JsonMap]));
  };
  const replicas = (found: Map<string, JsonMap>, key: string) => asMap(found.get(key)?.spec).replicas;
  const etcdArgs = (found: Map<string, JsonMap>) =>
    JSON.stringify(asMap(asMap(asMap(found.get("StatefulSet/etcd")?.spec).template).spec));

  it("stops every component, runs the Job only while Restoring, and starts etcd from the restored data", () => {
    const normal = objects(undefined);
    expect(etcdArgs(normal)).toContain('"--data-dir=/var/lib/etcd/data"');
    expect(normal.has("Job/etcd-restore-r1")).toBe(false);
    for (const phase of ["Stopping", "Restoring"] as const) {
      const found = objects({ name: "r1", snapshot: "s.db", phase });
      for (const key of [
        "Deployment/kube-apiserver",
        "Deployment/kube-controller-manager",
        "Deployment/kube-scheduler",
        "StatefulSet/etcd",
      ])
        expect(replicas(found, key), `${phase} ${key}`).toBe(0);
      expect(found.has("Job/etcd-restore-r1")).toBe(phase === "Restoring");
    }
    const job = JSON.stringify(
      objects({ name: "r1", snapshot: "s.db", phase: "Restoring" }).get("Job/etcd-restore-r1"),
    );
    for (const arg of [
      '"etcdutl"',
      '"/backup/s.db"',
      '"--data-dir=/var/lib/etcd/restore-r1"',
      '"--name=etcd-0"',
      '"claimName":"data-etcd-0"',
      '"restartPolicy":"Never"',
    ])
      expect(job).toContain(arg);
    const running = objects({ name: "r1", snapshot: "s.db", phase: "Running" });
    expect(etcdArgs(running)).toContain('"--data-dir=/var/lib/etcd/restore-r1"');
    expect(replicas(running, "StatefulSet/etcd")).toBe(1);
    expect(replicas(running, "Deployment/kube-apiserver")).toBe(1);
    expect(running.has("Job/etcd-restore-r1")).toBe(false);
  });
});
