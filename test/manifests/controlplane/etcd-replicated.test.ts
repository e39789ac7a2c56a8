import { describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../../src/apimachinery/json.js";
import { etcdAlarmJob, etcdMemberJob } from "../../../src/manifests/controlplane/etcd-member-jobs.js";
import { dedicatedEtcdObjects } from "../../../src/manifests/controlplane/etcd-objects.js";
import { resolveControlPlane } from "../../../src/model/controlplane/hosted-control-plane.js";
import type { Cluster, ControlPlaneClass, RestoreOverlay } from "../../../src/model/types.js";

// pc-1 of a class whose dedicated etcd has `replicas` members, exposed by a LoadBalancer.
function plane(
  replicas: 1 | 3 | 5,
  restore?: RestoreOverlay,
  defrag?: { readonly schedule: string; readonly suspend?: boolean },
) {
  const cluster: Cluster = {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Cluster",
    metadata: { name: "pc-1" },
    spec: {
      controlPlane: { host: "meta-1", class: "ha", expose: { type: "LoadBalancer", address: "203.0.113.1" } },
    },
    origin: { file: "clusters/pc-1.yaml", index: 0 },
  };
  const found: ControlPlaneClass = {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "ControlPlaneClass",
    metadata: { name: "ha" },
    spec: { version: "v1.36.3", etcd: { version: "3.6.16-0", replicas, ...(defrag ? { defrag } : {}) } },
    origin: { file: "controlplanes/ha.yaml", index: 0 },
  };
  const resolved = resolveControlPlane(cluster, new Map([["ha", found]]), undefined, restore);
  if (!resolved) throw new Error("pc-1 did not resolve");
  return resolved;
}

const kinds = (objects: readonly JsonMap[], kind: string) => objects.filter((o) => o.kind === kind);
const container = (o: JsonMap) =>
  asMap(asList(asMap(asMap(asMap(asMap(o.spec).template).spec)).containers)[0]);

describe("a replicated etcd", () => {
  it.each<[1 | 3 | 5, boolean]>([
    [1, false],
    [3, true],
    [5, true],
  ])(
    "of %i members reads its initial-cluster-state from the host's ConfigMap: %s",
    (replicas, fromConfigMap) => {
      const [set] = kinds(dedicatedEtcdObjects(plane(replicas)), "StatefulSet");
      const etcd = container(set as JsonMap);
      const args = asList(etcd.args).map(String);
      const env = asList(etcd.env).map((e) => asMap(e));
      expect(args.includes("--initial-cluster-state=new")).toBe(!fromConfigMap);
      expect(env.find((e) => e.name === "ETCD_INITIAL_CLUSTER_STATE")?.valueFrom).toEqual(
        fromConfigMap
          ? { configMapKeyRef: { name: "etcd-members", key: "initial-cluster-state", optional: true } }
          : undefined,
      );
      expect(args.find((a) => a.startsWith("--initial-cluster="))?.split(",")).toHaveLength(replicas);
    },
  );

  it.each<[1 | 3 | 5, string[]]>([
    [1, ["etcd-restore-r1"]],
    [3, ["etcd-restore-r1-0", "etcd-restore-r1-1", "etcd-restore-r1-2"]],
  ])(
    "of %i members is restored by a Job per member, each into its own volume under its own name",
    (replicas, names) => {
      const objects = dedicatedEtcdObjects(
        plane(replicas, { name: "r1", snapshot: "s.db", phase: "Restoring" }),
      );
      const jobs = kinds(objects, "Job");
      expect(jobs.map((j) => asMap(j.metadata).name)).toEqual(names);
      const [set] = kinds(objects, "StatefulSet");
      const initialCluster = asList(container(set as JsonMap).args)
        .map(String)
        .find((a) => a.startsWith("--initial-cluster="));
      jobs.forEach((job, ordinal) => {
        const args = asList(container(job).args).map(String);
        expect(args).toContain(`--name=etcd-${ordinal}`);
        expect(args).toContain(initialCluster);
        expect(args).toContain("--data-dir=/var/lib/etcd/restore-r1");
        const volumes = asList(asMap(asMap(asMap(job.spec).template).spec).volumes).map((v) => asMap(v));
        expect(asMap(volumes.find((v) => v.name === "data")?.persistentVolumeClaim).claimName).toBe(
          `data-etcd-${ordinal}`,
        );
      });
    },
  );

  it("is not restored while the restore only stops it or has run", () => {
    for (const phase of ["Stopping", "Running"] as const)
      expect(kinds(dedicatedEtcdObjects(plane(3, { name: "r1", snapshot: "s.db", phase })), "Job")).toEqual(
        [],
      );
  });

  it.each<["move-leader" | "remove" | "add", string[]]>([
    ["move-leader", ["move-leader", "8e9e05c52164694d"]],
    ["remove", ["member", "remove", "2737ecedbf2a9065"]],
    ["add", ["member", "add", "etcd-2", "--peer-urls=https://etcd-2.etcd.gitfleet-cp-pc-1.svc:2380"]],
  ])(
    "has a member's %s Job against the Ready members, with the etcd's client certificate",
    (step, command) => {
      const job = etcdMemberJob(
        plane(3),
        step,
        "etcd-2",
        "2737ecedbf2a9065",
        ["etcd-0", "etcd-1"],
        undefined,
        "8e9e05c52164694d",
      );
      expect(asMap(job.metadata).name).toBe(`etcd-${step}-2-2737ecedbf2a9065`);
      const args = asList(container(job).args).map(String);
      expect(args[0]).toBe(
        "--endpoints=https://etcd-0.etcd.gitfleet-cp-pc-1.svc:2379,https://etcd-1.etcd.gitfleet-cp-pc-1.svc:2379",
      );
      expect(args.slice(-command.length)).toEqual(command);
      expect(asMap(asMap(asMap(job.spec).template).spec).restartPolicy).toBe("Never");
      expect(String(asMap(asMap(job.metadata).name)).length).toBeLessThanOrEqual(63);
    },
  );

  it.each<["defrag" | "disarm", string[]]>([
    ["defrag", ["--command-timeout=5m", "defrag", "--cluster"]],
    ["disarm", ["alarm", "disarm"]],
  ])("has a NOSPACE %s Job against the Ready members, one per etcd", (step, command) => {
    const job = etcdAlarmJob(plane(3), step, ["etcd-0", "etcd-2"]);
    expect(asMap(job.metadata).name).toBe(`etcd-alarm-${step}`);
    expect(asMap(asMap(job.metadata).labels)["gitfleet.io/etcd-alarm"]).toBe(step);
    const args = asList(container(job).args).map(String);
    expect(args[0]).toBe(
      "--endpoints=https://etcd-0.etcd.gitfleet-cp-pc-1.svc:2379,https://etcd-2.etcd.gitfleet-cp-pc-1.svc:2379",
    );
    expect(args.slice(-command.length)).toEqual(command);
  });

  it("stays Ready while NOSPACE refuses writes, and takes the class's quota", () => {
    const [set] = kinds(dedicatedEtcdObjects(plane(3)), "StatefulSet");
    const etcd = container(set as JsonMap);
    expect(asMap(asMap(etcd.readinessProbe).httpGet).path).toBe("/health?exclude=NOSPACE&serializable=true");
    expect(
      asList(etcd.args)
        .map(String)
        .filter((a) => a.startsWith("--quota-backend-bytes")),
    ).toEqual([]);
    const quoted = plane(3);
    const [withQuota] = kinds(
      dedicatedEtcdObjects({ ...quoted, etcd: { ...quoted.etcd, quotaBytes: 64 * 2 ** 20 } }),
      "StatefulSet",
    );
    expect(asList(container(withQuota as JsonMap).args)).toContain("--quota-backend-bytes=67108864");
  });

  it("is defragmented on the class's schedule through all its members, or not at all", () => {
    const cronJobs = (objects: readonly JsonMap[]) =>
      kinds(objects, "CronJob").filter((c) => asMap(c.metadata).name === "etcd-defrag");
    expect(cronJobs(dedicatedEtcdObjects(plane(3)))).toEqual([]);
    const [cron] = cronJobs(
      dedicatedEtcdObjects(plane(3, undefined, { schedule: "0 3 * * 0", suspend: true })),
    );
    const spec = asMap((cron as JsonMap).spec);
    expect([spec.schedule, spec.suspend, spec.concurrencyPolicy]).toEqual(["0 3 * * 0", true, "Forbid"]);
    const args = asList(container(asMap(spec.jobTemplate)).args).map(String);
    expect(args.slice(-2)).toEqual(["defrag", "--cluster"]);
    expect(args[0]?.split(",")).toHaveLength(3);
  });
});
