import { beforeAll, describe, expect, it } from "vitest";
import { loadFleet } from "../../src/model/load-fleet.js";
import type { FleetModel } from "../../src/model/types.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";
import { controlPlaneHolds } from "../../src/sync/control-plane-order.js";
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
    const held = controlPlaneHolds(model, "meta-1", (cluster) => (cluster === "pc-1" ? reported : undefined));
    expect([...held].map(([identity, hold]) => `${identity} ${hold.reason}`)).toEqual(expected);
    for (const hold of held.values()) expect(hold.by).toBe("control-plane");
  });

  it("holds nothing on a cluster that hosts no control plane", () => {
    expect(controlPlaneHolds(model, "pc-1", () => "v1.30.0").size).toBe(0);
  });
});
