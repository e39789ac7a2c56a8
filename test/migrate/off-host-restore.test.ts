import { beforeAll, describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { objectViolations } from "../../src/apimachinery/openapi/object-schemas.js";
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
import { readRestoreStatus, restoreStatusText } from "../../src/status/restore-file.js";
import { OFFSITE_IMAGE, offsiteExample } from "../helpers/hosted-example.js";

// A restore from an off-host backup: it stops the control plane, waits while the host's credentials
// step brings the backup's keys back and stages its snapshot (Fetching), then restores as a snapshot
// restore does, its Job fetching the staged snapshot first; what validation refuses of one.

const SOURCE = "f".repeat(40);
const T0 = Date.parse("2026-12-06T10:00:00Z");
const KEY = "hosted/pc-3/20261206T093000Z-etcd-backup-29412345-abcde.tar.age";
const encoder = new TextEncoder();

const RESTORE = {
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "EtcdRestore",
  metadata: { name: "back" },
  spec: { cluster: "pc-3", backup: "latest" },
  origin: { file: "controlplanes/back.yaml" },
} as unknown as EtcdRestore;

const STOPPED: RestoreReport = { stopped: true, running: false };

function step(previous: RestoreStatus | undefined, report: RestoreReport | undefined, now = T0) {
  const outcome = advanceRestore({ restore: RESTORE, previous, sourceCommit: SOURCE, report, now });
  // Every status reads back from its file as it was written.
  expect(readRestoreStatus(restoreStatusText(outcome.status))).toEqual(outcome.status);
  return outcome;
}

describe("a restore from an off-host backup", () => {
  it("stops, fetches, restores, starts and succeeds, each on what the host reports", () => {
    const stopping = step(undefined, undefined);
    expect(stopping.status).toMatchObject({ phase: "Stopping", backup: "latest" });
    expect(stopping.status).not.toHaveProperty("snapshot");
    const fetching = step(stopping.status, STOPPED, T0 + 1_000);
    expect(fetching.change).toBe("back: Stopping → Fetching (fetching the off-host backup latest)");
    // Nothing said yet: it waits.
    expect(step(fetching.status, STOPPED, T0 + 2_000)).toEqual({ status: fetching.status });
    const restoring = step(fetching.status, { ...STOPPED, fetch: { fetched: KEY } }, T0 + 3_000);
    expect(restoring.status).toMatchObject({ phase: "Restoring", backup: "latest", fetched: KEY });
    expect(restoring.change).toBe(`back: Fetching → Restoring (restoring ${KEY})`);
    const starting = step(restoring.status, { ...STOPPED, job: { health: "Healthy" } }, T0 + 4_000);
    expect(starting.status).toMatchObject({ phase: "Starting", fetched: KEY });
    const done = step(starting.status, { stopped: false, running: true }, T0 + 5_000);
    expect(done.status).toMatchObject({ phase: "Succeeded", fetched: KEY, backup: "latest" });
  });

  it("keeps Fetching while the fetch fails, saying why once per new reason and keeping since", () => {
    const fetching = step(step(undefined, undefined).status, STOPPED, T0 + 1_000).status;
    const failing = step(
      fetching,
      { ...STOPPED, fetch: { error: "the store holds no backup of pc-3" } },
      T0 + 2_000,
    );
    expect(failing.change).toBeUndefined();
    expect(failing.status).toEqual({
      ...fetching,
      reason: "the backup cannot be fetched yet: the store holds no backup of pc-3",
    });
    // The same reason again changes nothing; another one is recorded.
    expect(
      step(failing.status, { ...STOPPED, fetch: { error: "the store holds no backup of pc-3" } }, T0 + 3_000),
    ).toEqual({ status: failing.status });
    const other = step(failing.status, { ...STOPPED, fetch: { error: "403 AccessDenied" } }, T0 + 4_000);
    expect(other.status).toMatchObject({
      phase: "Fetching",
      since: fetching.since,
      reason: "the backup cannot be fetched yet: 403 AccessDenied",
    });
    // A Job's health means nothing before the fetch: it is not rendered yet.
    expect(step(other.status, { ...STOPPED, job: { health: "Healthy" } }, T0 + 5_000).status.phase).toBe(
      "Fetching",
    );
  });

  it.each([
    ["Stopping", undefined, { phase: "Stopping", backup: "latest", snapshot: "latest" }],
    ["Fetching", undefined, { phase: "Fetching", backup: "latest", snapshot: "latest" }],
    ["Restoring", KEY, { phase: "Restoring", backup: KEY, snapshot: KEY }],
    ["Succeeded", KEY, { phase: "Running", backup: KEY, snapshot: KEY }],
  ] as const)("gives the render %s as an overlay naming the backup", (phase, fetched, expected) => {
    const status: RestoreStatus = {
      restore: "back",
      cluster: "pc-3",
      backup: "latest",
      ...(fetched ? { fetched } : {}),
      phase,
      since: new Date(T0).toISOString(),
      startedIn: SOURCE,
    };
    expect(restoreOverlays([status]).get("pc-3")).toEqual({ name: "back", ...expected, startedIn: SOURCE });
  });

  it.each([
    ["both a snapshot and a backup", "snapshot: a.db\nbackup: latest\n"],
    ["neither", ""],
  ])("reads no status file holding %s", (_name, source) => {
    const text = `restore: back\ncluster: pc-3\n${source}phase: Stopping\nsince: 2026-12-06T10:00:00.000Z\nstartedIn: ${SOURCE}\n`;
    expect(readRestoreStatus(text)).toBeUndefined();
  });
});

describe("an off-host restore rendered and validated", () => {
  let tree: Map<string, Uint8Array>;
  beforeAll(async () => {
    tree = await offsiteExample();
  });

  const modelWith = (files: Record<string, string>) => {
    const changed = new Map(tree);
    for (const [path, text] of Object.entries(files)) changed.set(path, encoder.encode(text));
    return loadFleet(changed as FileTree);
  };
  const restoreFile = (spec: string) =>
    `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata:\n  name: back\nspec:\n  cluster: pc-3\n${spec}`;

  it("runs the Job only while Restoring: gitfleet fetches the staged snapshot into the backup volume, then etcdutl restores it, valid against Kubernetes 1.36's schemas", () => {
    const loaded = modelWith({ "controlplanes/back.yaml": restoreFile("  backup: latest\n") });
    expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
    const objects = (overlay: RestoreOverlay) => {
      const restored = withControlPlaneVersions(loaded.model as FleetModel, {
        versions: new Map(),
        restores: new Map([["pc-3", overlay]]),
      });
      const app = restored.apps.find((a) => a.name === "gitfleet-cp-pc-3");
      return new Map((app?.resources ?? []).map((r) => [`${r.kind}/${r.name}`, r.object as JsonMap]));
    };
    for (const phase of ["Stopping", "Fetching"] as const) {
      const found = objects({ name: "back", snapshot: "latest", phase, backup: "latest" });
      expect(asMap(found.get("StatefulSet/etcd")?.spec).replicas, phase).toBe(0);
      expect(asMap(found.get("Deployment/kube-apiserver")?.spec).replicas, phase).toBe(0);
      expect(
        [...found.keys()].filter((k) => k.startsWith("Job/")),
        phase,
      ).toEqual([]);
    }
    // The class's etcd has three members: a Job each, each unpacking into a directory of its own.
    const restoring = objects({ name: "back", snapshot: KEY, phase: "Restoring", backup: KEY });
    const jobs = [0, 1, 2].map((i) => restoring.get(`Job/etcd-restore-back-${i}`) as JsonMap);
    const intos = jobs.map(
      (j) => JSON.stringify(asMap(asMap(j.spec).template)).match(/"--into","([^"]+)"/)?.[1],
    );
    expect(intos).toEqual([0, 1, 2].map((i) => `/backup/etcd-restore-back-${i}`));
    const job = jobs[0] as JsonMap;
    expect(objectViolations("1.36", new Map(), job)).toEqual([]);
    const pod = asMap(asMap(asMap(job.spec).template).spec);
    const [fetch] = pod.initContainers as JsonMap[];
    const [restore] = pod.containers as JsonMap[];
    expect(fetch).toMatchObject({
      name: "fetch",
      image: OFFSITE_IMAGE,
      command: ["gitfleet"],
      args: [
        ...["backup", "pull", "--cluster", "pc-3", "--restore", "back"],
        ...["--store-dir", "/store", "--identity", "/restore-key/identity"],
        // The quota (4Gi) and 64Mi: the largest staged copy it takes.
        ...[
          "--into",
          "/backup/etcd-restore-back-0",
          "--work-dir",
          "/scratch",
          "--max-bytes",
          String(4160 * 2 ** 20),
        ],
      ],
    });
    expect(asMap(restore).args).toContain("/backup/etcd-restore-back-0/snapshot.db");
    // Only the fetch writes the backup volume; etcdutl reads it.
    const mount = (container: unknown) =>
      (asMap(container).volumeMounts as JsonMap[]).find((m) => m.name === "backup");
    expect(mount(fetch)).toEqual({ name: "backup", mountPath: "/backup" });
    expect(mount(restore)).toMatchObject({ readOnly: true });
    const volumes = new Map((pod.volumes as JsonMap[]).map((v) => [String(v.name), v]));
    expect(asMap(volumes.get("backup")?.persistentVolumeClaim).readOnly).toBe(false);
    expect(asMap(volumes.get("restore-key")?.secret).secretName).toBe("etcd-restore-back-key");
    expect(asMap(volumes.get("store")?.secret).secretName).toBe("etcd-backup-store");
    // Room for the encrypted copy and the archive.
    expect(volumes.get("work")).toEqual({ name: "work", emptyDir: { sizeLimit: "8320Mi" } });
    // No CA or key of the control plane is mounted in it.
    expect(JSON.stringify(pod)).not.toMatch(/"secretName":"(ca|etcd-ca|service-account|front-proxy-ca)"/);
  });

  it("keeps the control plane stopped from the first render, before the policy started the restore, and after it Failed", () => {
    const loaded = modelWith({ "controlplanes/back.yaml": restoreFile("  backup: latest\n") });
    const model = loaded.model as FleetModel;
    const etcd = (restores: Map<string, RestoreOverlay>) => {
      const rendered = withControlPlaneVersions(model, { versions: new Map(), restores });
      const app = rendered.apps.find((a) => a.name === "gitfleet-cp-pc-3");
      return asMap(app?.resources.find((r) => r.kind === "StatefulSet")?.object.spec);
    };
    // As loaded (no policy has given anything yet), and with an earlier restore's data given.
    const asLoaded = model.apps.find((a) => a.name === "gitfleet-cp-pc-3");
    expect(asMap(asLoaded?.resources.find((r) => r.kind === "StatefulSet")?.object.spec).replicas).toBe(0);
    const earlier = new Map([["pc-3", { name: "r0", snapshot: "s.db", phase: "Running" } as RestoreOverlay]]);
    expect(etcd(earlier).replicas).toBe(0);
    // Once it runs the policy's overlay decides; once it Succeeded the cluster runs on its data.
    const done = new Map([
      ["pc-3", { name: "back", snapshot: KEY, phase: "Running", backup: KEY } as RestoreOverlay],
    ]);
    expect(etcd(done).replicas).toBe(3);
    expect(JSON.stringify(etcd(done))).toContain("--data-dir=/var/lib/etcd/restore-back");
    // Without the restore in the repo, the earlier restore's data runs.
    const without = modelWith({}).model as FleetModel;
    const running = withControlPlaneVersions(without, { versions: new Map(), restores: earlier });
    const plane = running.apps.find((a) => a.name === "gitfleet-cp-pc-3");
    expect(asMap(plane?.resources.find((r) => r.kind === "StatefulSet")?.object.spec).replicas).toBe(3);
  });

  it.each([
    [
      "both a snapshot and a backup",
      { "controlplanes/back.yaml": restoreFile("  snapshot: a.db\n  backup: latest\n") },
      "controlplanes/back.yaml:8:11: error INVALID_FIELD_COMBINATION: an EtcdRestore restores from a snapshot in the host's backup volume or from an off-host backup, not both: remove snapshot or backup",
    ],
    [
      "neither",
      { "controlplanes/back.yaml": restoreFile("") },
      "controlplanes/back.yaml:6:3: error MISSING_FIELD: an EtcdRestore needs snapshot (a file in the host's backup volume) or backup (latest, or a key gitfleet backup list prints)",
    ],
    [
      "a backup of a cluster whose class keeps its backups in the host",
      {
        "clusters/pc-4.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: pc-4\nspec:\n  controlPlane:\n    host: meta-1\n    class: standard\n    expose: { type: LoadBalancer }\n",
        "controlplanes/back.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata:\n  name: back\nspec:\n  cluster: pc-4\n  backup: latest\n`,
      },
      "controlplanes/back.yaml:7:11: error INVALID_FIELD_COMBINATION: pc-4's class standard sends no backup off the host (etcd.backup.offHost): restore a snapshot of its backup volume instead",
    ],
  ])("refuses %s", (_name, files, line) => {
    const loaded = modelWith(files);
    expect(loaded.model).toBeUndefined();
    const lines = loaded.problems.map(
      (p) => `${p.file}:${p.line}:${p.column}: ${p.severity} ${p.code}: ${p.message}`,
    );
    expect(lines, lines.join("\n")).toContain(line);
  });

  it.each(["latest", KEY])("takes backup: %s", (backup) => {
    const loaded = modelWith({ "controlplanes/back.yaml": restoreFile(`  backup: ${backup}\n`) });
    expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
  });

  it.each([
    "newest",
    "../../etc/passwd.tar.age",
    "hosted/../other/20261206T093000Z-a.tar.age",
    "../20261206T093000Z-a.tar.age",
    "hosted/pc-3/x.tar",
    "hosted/pc-3/20261206T093000Z-a b.tar.age",
    "20261206T093000Z-a.tar.age",
  ])("refuses backup: %s by its schema", (backup) => {
    const loaded = modelWith({ "controlplanes/back.yaml": restoreFile(`  backup: "${backup}"\n`) });
    expect(loaded.problems.some((p) => p.file === "controlplanes/back.yaml" && p.line === 7)).toBe(true);
  });
});
