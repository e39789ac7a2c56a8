import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { planCredentials } from "../../src/credentials/control-plane-pki.js";
import { readCertificate } from "../../src/credentials/x509.js";
import {
  type ComponentPod,
  podsToRestart,
  restartAfterCaReplacement,
} from "../../src/kube/ca-replacement-restart.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import {
  type HostedControlPlane,
  resolveControlPlanes,
} from "../../src/model/controlplane/hosted-control-plane.js";
import type { FleetModel } from "../../src/model/types.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { offsiteExample } from "../helpers/hosted-example.js";

const at = (second: number) => Date.UTC(2026, 11, 6, 12, 0, second);
const pod = (name: string, component: string, second: number): ComponentPod => ({
  name,
  uid: `uid-${name}`,
  component,
  createdAt: at(second),
});

describe("which component pods restart on replaced CAs", () => {
  const pods = [
    pod("etcd-0", "etcd", 10),
    pod("kube-apiserver-a", "kube-apiserver", 20),
    pod("kube-controller-manager-a", "kube-controller-manager", 30),
    pod("kube-scheduler-a", "kube-scheduler", 31),
    pod("etcd-backup-1-x", "etcd-backup", 0),
    pod("odd", "kube-apiserver", Number.NaN),
    { ...pod("kube-apiserver-going", "kube-apiserver", 5), deleting: true },
  ];
  const names = (list: ComponentPod[]) => list.map((p) => p.name);
  it.each([
    { what: "no token asked for", token: undefined, replacedFor: "t1", replacedAt: at(40), restarted: [] },
    {
      what: "the CA not replaced for this token yet",
      token: "t2",
      replacedFor: "t1",
      replacedAt: at(40),
      restarted: [],
    },
    {
      what: "a CA whose time cannot be read",
      token: "t1",
      replacedFor: "t1",
      replacedAt: undefined,
      restarted: [],
    },
    {
      what: "every component created before the replacement",
      token: "t1",
      replacedFor: "t1",
      replacedAt: at(40),
      restarted: ["etcd-0", "kube-apiserver-a", "kube-controller-manager-a", "kube-scheduler-a"],
    },
    // At, just before and just after a pod's second: a pod of the replacement's second restarts too.
    {
      what: "the replacement in the scheduler's second",
      token: "t1",
      replacedFor: "t1",
      replacedAt: at(31),
      restarted: ["etcd-0", "kube-apiserver-a", "kube-controller-manager-a", "kube-scheduler-a"],
    },
    {
      what: "the replacement a second before the scheduler's",
      token: "t1",
      replacedFor: "t1",
      replacedAt: at(30),
      restarted: ["etcd-0", "kube-apiserver-a", "kube-controller-manager-a"],
    },
    {
      what: "the replacement before every pod",
      token: "t1",
      replacedFor: "t1",
      replacedAt: at(9),
      restarted: [],
    },
  ])("$what: restarts $restarted", ({ token, replacedFor, replacedAt, restarted }) => {
    expect(names(podsToRestart(token, { replacedFor, replacedAt }, pods))).toEqual(restarted);
  });
});

// Against a host (a simulated member over HTTP): the component pods of the control plane whose CAs
// were replaced are deleted once, the backup Job's pod and another cluster's pods are left.
describe("restarting a control plane after replaceCAs", () => {
  let member: SimulatedMember;
  let client: MemberClient;
  let plane: HostedControlPlane;
  let other: HostedControlPlane;

  beforeAll(async () => {
    const loaded = loadFleet(await offsiteExample());
    if (!loaded.model) throw new Error(JSON.stringify(loaded.problems));
    const planes = resolveControlPlanes(loaded.model as FleetModel).map((e) => e.plane);
    const found = planes.find((p) => p.cluster === "pc-3") as HostedControlPlane;
    plane = { ...found, certificates: { ...found.certificates, replaceCAs: "incident-1" } };
    other = planes.find((p) => p.cluster === "pc-1") as HostedControlPlane;
    member = await startMember({ name: "meta-1" });
    client = new MemberClient("meta-1", memberClientConfig(member), { retries: 0, timeoutMs: 10_000 });
    for (const namespace of [plane.namespace, other.namespace])
      await client.raw("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: namespace },
      });
    const make = (of: HostedControlPlane, name: string, component: string) =>
      client.raw("POST", `/api/v1/namespaces/${of.namespace}/pods`, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name,
          labels: { "gitfleet.io/hosted-cluster": of.cluster, "app.kubernetes.io/component": component },
        },
        spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] },
      });
    for (const component of [
      "etcd",
      "kube-apiserver",
      "kube-controller-manager",
      "kube-scheduler",
      "etcd-backup",
    ])
      await make(plane, `${component}-0`, component);
    // A pod in the namespace with another cluster's label.
    await make({ ...plane, cluster: "pc-9" }, "stray-apiserver", "kube-apiserver");
    await make(other, "kube-apiserver-0", "kube-apiserver");
  }, 60_000);
  afterAll(async () => {
    await member?.close();
  });

  const caSecret = async (issuedAt: number, token: string | undefined) => {
    const created = await planCredentials(
      { ...plane, certificates: { ...plane.certificates, replaceCAs: token } },
      new Map(),
      issuedAt,
    );
    return created.writes.find((w) => w.name === "ca" && w.namespace === plane.namespace)?.data;
  };
  const podNames = async (namespace: string) =>
    asList(asMap(await client.raw("GET", `/api/v1/namespaces/${namespace}/pods`)).items)
      .map((p) => String(asMap(asMap(p).metadata).name))
      .sort();

  it("deletes nothing for a CA replaced before the pods started, or for another token", async () => {
    const earlier = await caSecret(Date.now() - 60_000, "incident-1");
    expect(readCertificate(earlier?.["tls.crt"] ?? "")).toBeDefined();
    expect(await restartAfterCaReplacement(client, plane, earlier)).toEqual([]);
    const later = await caSecret(Date.now() + 60_000, "incident-0");
    expect(await restartAfterCaReplacement(client, plane, later)).toEqual([]);
    expect(await podNames(plane.namespace)).toHaveLength(6);
  });

  it("deletes the components' pods started before the replacement once, and nothing else", async () => {
    const replaced = await caSecret(Date.now() + 60_000, "incident-1");
    expect(await restartAfterCaReplacement(client, plane, replaced)).toEqual([
      "etcd-0",
      "kube-apiserver-0",
      "kube-controller-manager-0",
      "kube-scheduler-0",
    ]);
    expect(await podNames(plane.namespace)).toEqual(["etcd-backup-0", "stray-apiserver"]);
    expect(await podNames(other.namespace)).toEqual(["kube-apiserver-0"]);
    // The next pass finds nothing more to restart.
    expect(await restartAfterCaReplacement(client, plane, replaced)).toEqual([]);
  });
});
