import { beforeAll, describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { RestorePhase, RestoreStatus } from "../../src/migrate/etcd-restore.js";
import type { HostedCredentials } from "../../src/model/controlplane/credential-record.js";
import type { FleetModel } from "../../src/model/types.js";
import { advanceRestores } from "../../src/policy/restores.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";
import type { ClusterSyncResult, ObjectResult } from "../../src/sync/sync-result.js";
import { HOSTED_EXAMPLE_DIR } from "../helpers/hosted-example.js";

// What the host reports moves a restore on: the control plane's workloads stopped (a Service of the
// same name is not a workload), then every restore Job of the etcd's members done.

const NOW = Date.parse("2026-12-06T02:00:00Z");
const NS = "gitfleet-cp-pc-3";
const APP = "gitfleet-cp-pc-3";
const encoder = new TextEncoder();

let model: FleetModel;
beforeAll(async () => {
  const files = new Map(await readDirectoryTree(HOSTED_EXAMPLE_DIR));
  // pc-3: the class's three-member etcd of its own, behind a LoadBalancer Service.
  files.set(
    "clusters/pc-3.yaml",
    encoder.encode(
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: pc-3\nspec:\n  controlPlane:\n    host: meta-1\n    class: standard\n    expose: { type: LoadBalancer }\n",
    ),
  );
  files.set(
    "controlplanes/r1.yaml",
    encoder.encode(
      "apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata: { name: r1 }\nspec: { cluster: pc-3, snapshot: s.db }\n",
    ),
  );
  const loaded = loadFleet(files);
  if (!loaded.model) throw new Error(JSON.stringify(loaded.problems));
  model = loaded.model;
});

function object(identity: string, extra: Partial<ObjectResult> = {}): ObjectResult {
  return { identity, app: APP, action: "unchanged", health: { status: "Healthy" }, ...extra } as ObjectResult;
}

const stopped = [
  object(`apps/StatefulSet/${NS}/etcd`, { desiredReplicas: 0, readyReplicas: 0 }),
  object(`apps/Deployment/${NS}/kube-apiserver`, { desiredReplicas: 0, readyReplicas: 0 }),
  object(`/Service/${NS}/kube-apiserver`, { entryPoint: ["203.0.113.9"] }),
];

const job = (name: string, status: "Healthy" | "Progressing" | "Degraded") =>
  object(`batch/Job/${NS}/${name}`, {
    health: { status, ...(status === "Degraded" ? { reason: "BackoffLimitExceeded" } : {}) },
  });

function step(
  phase: RestorePhase,
  objects: ObjectResult[],
  source: Pick<RestoreStatus, "snapshot" | "backup"> = { snapshot: "s.db" },
  credentials?: HostedCredentials,
): RestoreStatus | undefined {
  const previous: RestoreStatus = {
    restore: "r1",
    cluster: "pc-3",
    ...source,
    phase,
    since: "",
    startedIn: "c",
  };
  const result: ClusterSyncResult = {
    cluster: "meta-1",
    sourceCommit: "c",
    reachable: true,
    objects,
    pruned: [],
    retained: [],
    inventory: { entries: [] } as unknown as ClusterSyncResult["inventory"],
    ...(credentials ? { credentials } : {}),
  };
  return advanceRestores({
    model,
    renderedCommit: "c",
    recorded: new Map([["r1", previous]]),
    results: new Map([["meta-1", result]]),
    failingSince: new Map(),
    now: NOW,
  }).statuses.get("r1");
}

describe("a restore of a replicated etcd behind a Service", () => {
  it("goes on to Restoring once etcd and the API server are stopped, whatever its Service", () => {
    expect(step("Stopping", stopped)?.phase).toBe("Restoring");
    const running = stopped.map((o) =>
      o.identity.endsWith("/etcd") ? { ...o, desiredReplicas: 3, readyReplicas: 1 } : o,
    );
    expect(step("Stopping", running)?.phase).toBe("Stopping");
  });

  it.each<[string, ("Healthy" | "Progressing" | "Degraded")[], RestorePhase]>([
    ["every member's Job done", ["Healthy", "Healthy", "Healthy"], "Starting"],
    ["one still running", ["Healthy", "Progressing", "Healthy"], "Restoring"],
    ["one failed, one running", ["Progressing", "Degraded", "Healthy"], "Failed"],
  ])("moves on from its Jobs as one: %s", (_name, healths, phase) => {
    const jobs = healths.map((h, i) => job(`etcd-restore-r1-${i}`, h));
    expect(step("Restoring", [...stopped, ...jobs])?.phase).toBe(phase);
  });

  it("takes only its own Jobs: another restore's or another member replacement's are not it", () => {
    const others = [job("etcd-restore-r10-0", "Degraded"), job("etcd-remove-1-a1", "Degraded")];
    expect(step("Restoring", [...stopped, ...others])?.phase).toBe("Restoring");
    expect(step("Restoring", [...stopped, ...others, job("etcd-restore-r1-0", "Healthy")])?.phase).toBe(
      "Starting",
    );
  });
});

// An off-host restore: its host's credentials step says when the backup is fetched, for which restore.
describe("a restore from an off-host backup, as the host's credentials step reports it", () => {
  const KEY = "hosted/pc-3/20261206T013000Z-etcd-0.tar.age";
  const fromBackup = { backup: "latest" };
  it.each<[string, HostedCredentials | undefined, Partial<RestoreStatus>]>([
    ["nothing reported yet", undefined, { phase: "Fetching" }],
    [
      "fetched for it",
      { "pc-3": { records: [], restoreFetch: { restore: "r1", fetched: KEY } } },
      { phase: "Restoring", fetched: KEY, reason: `restoring ${KEY}` },
    ],
    [
      "fetched for another restore",
      { "pc-3": { records: [], restoreFetch: { restore: "r0", fetched: KEY } } },
      { phase: "Fetching" },
    ],
    [
      "a pass that failed",
      {
        "pc-3": {
          error: "credentials of pc-3: restore r1 cannot fetch its off-host backup: 403 AccessDenied",
        },
      },
      {
        phase: "Fetching",
        reason:
          "the backup cannot be fetched yet: credentials of pc-3: restore r1 cannot fetch its off-host backup: 403 AccessDenied",
      },
    ],
    [
      "another cluster's fetch",
      { "pc-1": { records: [], restoreFetch: { restore: "r1", fetched: KEY } } },
      { phase: "Fetching" },
    ],
  ])("Fetching, %s", (_name, credentials, expected) => {
    expect(step("Fetching", stopped, fromBackup, credentials)).toMatchObject(expected);
  });

  it("goes to Fetching, not Restoring, once stopped", () => {
    expect(step("Stopping", stopped, fromBackup)).toMatchObject({ phase: "Fetching", backup: "latest" });
  });
});
