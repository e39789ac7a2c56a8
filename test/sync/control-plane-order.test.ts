import { beforeAll, describe, expect, it } from "vitest";
import { etcdRollout } from "../../src/kube/etcd-rollouts.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { resolveControlPlanes } from "../../src/model/controlplane/hosted-control-plane.js";
import type { FleetModel } from "../../src/model/types.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";
import { controlPlaneHolds, type EtcdRollout, etcdOf } from "../../src/sync/control-plane-order.js";
import { HOSTED_EXAMPLE_DIR } from "../helpers/hosted-example.js";

// Within one hosted control plane, kube-controller-manager and kube-scheduler follow kube-apiserver:
// held as they run until the hosted cluster's /version reports the API server's version.

let model: FleetModel;
beforeAll(async () => {
  model = loadFleet(await readDirectoryTree(HOSTED_EXAMPLE_DIR)).model as FleetModel;
});

describe("the order of a hosted control plane's upgrade", () => {
  it.each([
    ["a control plane never observed (being created)", undefined, []],
    ["an API server at the class's version", "v1.34.1", []],
    ["a vendor build of that version", "v1.34.1-gitfleet-sim", []],
    [
      "an API server still at the old version",
      "v1.34.0",
      [
        "apps/Deployment/gitfleet-cp-pc-1/kube-controller-manager waiting for kube-apiserver of pc-1 to report v1.34.1 (it reports v1.34.0)",
        "apps/Deployment/gitfleet-cp-pc-1/kube-scheduler waiting for kube-apiserver of pc-1 to report v1.34.1 (it reports v1.34.0)",
      ],
    ],
    [
      "an API server newer than the class (a rollback of a patch)",
      "v1.34.2",
      [
        "apps/Deployment/gitfleet-cp-pc-1/kube-controller-manager waiting for kube-apiserver of pc-1 to report v1.34.1 (it reports v1.34.2)",
        "apps/Deployment/gitfleet-cp-pc-1/kube-scheduler waiting for kube-apiserver of pc-1 to report v1.34.1 (it reports v1.34.2)",
      ],
    ],
  ])("%s", (_name, reported, expected) => {
    const held = controlPlaneHolds(model, "meta-1", {
      version: (cluster) => (cluster === "pc-1" ? reported : undefined),
    });
    expect([...held].map(([identity, hold]) => `${identity} ${hold.reason}`)).toEqual(expected);
    for (const hold of held.values()) expect(hold.by).toBe("control-plane");
  });

  // In a hosted cluster itself, kube-proxy follows its API server as the host's followers do.
  it.each([
    ["never observed", undefined, undefined],
    ["at the control plane's version", "v1.34.1", undefined],
    [
      "still at the old version",
      "v1.34.0",
      "waiting for kube-apiserver of pc-1 to report v1.34.1 (it reports v1.34.0)",
    ],
    [
      "newer (a rollback)",
      "v1.34.2",
      "waiting for kube-apiserver of pc-1 to report v1.34.1 (it reports v1.34.2)",
    ],
  ])(
    "holds a hosted cluster's kube-proxy, and only that, while its API server is %s",
    (_, reported, reason) => {
      const held = controlPlaneHolds(model, "pc-1", {
        version: (c) => (c === "pc-1" ? reported : "v1.30.0"),
      });
      expect([...held].map(([identity, hold]) => `${identity} ${hold.reason} ${hold.by}`)).toEqual(
        reason ? [`apps/DaemonSet/kube-system/kube-proxy ${reason} control-plane`] : [],
      );
    },
  );

  it("holds no kube-proxy in the host", () => {
    const held = controlPlaneHolds(model, "meta-1", { version: () => "v1.30.0" });
    expect([...held.keys()].some((identity) => identity.includes("kube-proxy"))).toBe(false);
  });

  // etcd before the API server: the example's pc-1 and pc-2 share etcd-a (3.6.4-0).
  it.each([
    ["no etcd yet (a control plane being created)", undefined, []],
    ["etcd at the rendered image, settled", { image: "registry.k8s.io/etcd:3.6.4-0", settled: true }, []],
    [
      "etcd still at the old image",
      { image: "registry.k8s.io/etcd:3.5.21-0", settled: true },
      ["waiting for etcd gitfleet-etcd-etcd-a/etcd-a to run 3.6.4-0 (it runs 3.5.21-0)"],
    ],
    [
      "etcd at the new image, still rolling",
      { image: "registry.k8s.io/etcd:3.6.4-0", settled: false },
      ["waiting for etcd gitfleet-etcd-etcd-a/etcd-a to finish rolling out"],
    ],
  ] as [string, EtcdRollout | undefined, string[]][])("%s", (_name, live, reasons) => {
    const held = controlPlaneHolds(model, "meta-1", {
      version: () => "v1.34.1",
      etcd: (namespace, name) =>
        `${namespace}/${name}` === "gitfleet-etcd-etcd-a/etcd-a" ? live : undefined,
    });
    const apiServers = ["pc-1", "pc-2"].map(
      (c) => held.get(`apps/Deployment/gitfleet-cp-${c}/kube-apiserver`)?.reason,
    );
    expect(apiServers).toEqual(reasons.length > 0 ? [reasons[0], reasons[0]] : [undefined, undefined]);
    expect([...held.keys()].every((identity) => identity.endsWith("/kube-apiserver"))).toBe(true);
  });

  it("reads a StatefulSet's rollout as the host reports it", () => {
    const plane = resolveControlPlanes(model, "meta-1")[0]?.plane;
    expect(plane && etcdOf(plane)).toEqual({ namespace: "gitfleet-etcd-etcd-a", name: "etcd-a" });
    const live = (status: Record<string, unknown>, generation = 2) => ({
      metadata: { generation },
      spec: { replicas: 3, template: { spec: { containers: [{ image: "registry.k8s.io/etcd:3.6.4-0" }] } } },
      status,
    });
    const done = {
      observedGeneration: 2,
      updatedReplicas: 3,
      readyReplicas: 3,
      currentRevision: "r2",
      updateRevision: "r2",
    };
    expect(etcdRollout(live(done))).toEqual({ image: "registry.k8s.io/etcd:3.6.4-0", settled: true });
    expect(etcdRollout(live({ ...done, currentRevision: "r1" })).settled).toBe(false);
    expect(etcdRollout(live({ ...done, updatedReplicas: 2 })).settled).toBe(false);
    expect(etcdRollout(live({ ...done, readyReplicas: 2 })).settled).toBe(false);
    expect(etcdRollout(live(done, 3)).settled).toBe(false);
  });
});
