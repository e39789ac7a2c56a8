import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CredentialPlan,
  type ExistingSecrets,
  planCredentials,
  type SecretData,
} from "../../src/credentials/control-plane-pki.js";
import { readGeneratedKubeconfig } from "../../src/credentials/kubeconfig-text.js";
import { resolveControlPlane } from "../../src/model/controlplane/hosted-control-plane.js";
import type { Cluster, ControlPlaneClass } from "../../src/model/types.js";

const DAY = 86_400_000;
const NOW = Date.parse("2026-12-02T08:00:00Z");

const CLASS: ControlPlaneClass = {
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "ControlPlaneClass",
  metadata: { name: "standard" },
  spec: {
    version: "v1.34.1",
    etcd: { version: "3.6.4-0" },
    certificates: { validity: "2400h", renewBefore: "240h" },
  },
  origin: { file: "controlplanes/standard.yaml", index: 0 },
};

function cluster(expose: NonNullable<Cluster["spec"]["controlPlane"]>["expose"]): Cluster {
  return {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Cluster",
    metadata: { name: "pc-1" },
    spec: { controlPlane: { host: "meta-1", class: "standard", expose } },
    origin: { file: "clusters/pc-1.yaml", index: 0 },
  };
}

const PLANE = resolveControlPlane(
  cluster({ type: "LoadBalancer", address: "203.0.113.21" }),
  new Map([["standard", CLASS]]),
);
if (!PLANE) throw new Error("no plane");
const plane = PLANE;

// What the host holds after writing a plan's Secrets over what it held.
function applied(existing: ExistingSecrets, plan: CredentialPlan): Map<string, SecretData> {
  const next = new Map(existing);
  for (const write of plan.writes) next.set(`${write.namespace}/${write.name}`, write.data);
  return next;
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gitfleet-pki-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openssl(...args: string[]): string {
  return execFileSync("openssl", args, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

// openssl verify at a given time (the tests' clock is not the machine's).
function verify(at: number, ca: string, certificate: string): string {
  return openssl("verify", "-attime", String(Math.floor(at / 1000) + 3600), "-CAfile", ca, certificate);
}

function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}

describe("hosted control-plane credentials", () => {
  it("creates every credential once, signed by the right CA, with the names the control plane is reached by", async () => {
    const first = await planCredentials(plane, new Map(), NOW);
    const names = first.writes.map((w) => `${w.namespace}/${w.name}`).sort();
    expect(names).toEqual(
      [
        "admin-kubeconfig",
        "apiserver-etcd-client",
        "apiserver-serving",
        "ca",
        "controller-manager-kubeconfig",
        "etcd-ca",
        "etcd-serving",
        "front-proxy-ca",
        "front-proxy-client",
        "scheduler-kubeconfig",
        "service-account",
      ].map((n) => `gitfleet-cp-pc-1/${n}`),
    );
    expect(first.records.every((r) => r.action === "created")).toBe(true);
    const host = applied(new Map(), first);
    const data = (name: string) => host.get(`gitfleet-cp-pc-1/${name}`) as SecretData;
    // openssl, not gitfleet, checks the chain and the names.
    const ca = file("ca.crt", data("ca")["tls.crt"] as string);
    expect(verify(NOW, ca, file("apiserver.crt", data("apiserver-serving")["tls.crt"] as string))).toContain(
      ": OK",
    );
    const san = openssl("x509", "-in", "apiserver.crt", "-noout", "-ext", "subjectAltName");
    for (const name of [
      "kubernetes.default.svc",
      "kube-apiserver.gitfleet-cp-pc-1.svc",
      "IP Address:203.0.113.21",
      "IP Address:10.96.0.1",
    ])
      expect(san).toContain(name);
    const etcdCa = file("etcd-ca.crt", data("etcd-ca")["tls.crt"] as string);
    const etcdClient = file("etcd-client.crt", data("apiserver-etcd-client")["tls.crt"] as string);
    expect(verify(NOW, etcdCa, etcdClient)).toContain(": OK");
    expect(data("apiserver-etcd-client")["ca.crt"]).toBe(data("etcd-ca")["tls.crt"]);
    // The admin kubeconfig: system:masters, signed by the cluster CA, pointing at the exposed address.
    const admin = readGeneratedKubeconfig(data("admin-kubeconfig").kubeconfig as string);
    expect(admin?.server).toBe("https://203.0.113.21:6443");
    expect(verify(NOW, ca, file("admin.crt", admin?.certificatePem ?? ""))).toContain(": OK");
    expect(openssl("x509", "-in", "admin.crt", "-noout", "-subject")).toMatch(
      /O\s*=\s*system:masters, CN\s*=\s*kubernetes-admin/,
    );
    const scheduler = readGeneratedKubeconfig(data("scheduler-kubeconfig").kubeconfig as string);
    expect(scheduler?.server).toBe("https://kube-apiserver.gitfleet-cp-pc-1.svc:6443");
    // The key in the Secret is the certificate's.
    const key = file("apiserver.key", data("apiserver-serving")["tls.key"] as string);
    expect(openssl("pkey", "-in", key, "-pubout")).toBe(
      openssl("x509", "-in", "apiserver.crt", "-noout", "-pubkey"),
    );
    // Records carry fingerprints and dates, never a body.
    for (const record of first.records) {
      expect(JSON.stringify(record)).not.toContain("BEGIN");
      expect(record.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
  });

  it("gives the components a kubeconfig that names the CA, certificate and key beside it, which a renewal rewrites", async () => {
    const host = applied(new Map(), await planCredentials(plane, new Map(), NOW));
    const secret = host.get("gitfleet-cp-pc-1/controller-manager-kubeconfig") as SecretData;
    expect(Object.keys(secret).sort()).toEqual(["ca.crt", "kubeconfig", "tls.crt", "tls.key"]);
    const config = JSON.parse(secret.kubeconfig as string) as {
      clusters: { cluster: Record<string, string> }[];
      users: { user: Record<string, string> }[];
    };
    expect(config.clusters[0]?.cluster).toEqual({
      server: "https://kube-apiserver.gitfleet-cp-pc-1.svc:6443",
      "certificate-authority": "/etc/kubernetes/kubeconfig/ca.crt",
    });
    expect(config.users[0]?.user).toEqual({
      "client-certificate": "/etc/kubernetes/kubeconfig/tls.crt",
      "client-key": "/etc/kubernetes/kubeconfig/tls.key",
    });
    expect(secret["ca.crt"]).toBe(host.get("gitfleet-cp-pc-1/ca")?.["tls.crt"]);
    const ca = file("cm-ca.crt", secret["ca.crt"] as string);
    expect(verify(NOW, ca, file("cm.crt", secret["tls.crt"] as string))).toContain(": OK");
    expect(openssl("x509", "-in", "cm.crt", "-noout", "-subject")).toMatch(
      /CN\s*=\s*system:kube-controller-manager/,
    );
    // Kept while current; renewed in place (same kubeconfig text, new certificate files).
    expect((await planCredentials(plane, host, NOW + DAY)).writes).toEqual([]);
    const renewed = applied(host, await planCredentials(plane, host, NOW + 91 * DAY));
    const next = renewed.get("gitfleet-cp-pc-1/controller-manager-kubeconfig") as SecretData;
    expect(next.kubeconfig).toBe(secret.kubeconfig);
    expect(next["tls.crt"]).not.toBe(secret["tls.crt"]);
    expect(next["tls.key"]).not.toBe(secret["tls.key"]);
  });

  it.each<[string, (data: SecretData) => SecretData, string]>([
    [
      "an embedded kubeconfig from before (the certificate files missing)",
      (d) => ({ kubeconfig: d.kubeconfig as string }),
      "its kubeconfig is not the one gitfleet writes",
    ],
    [
      "a kubeconfig someone edited",
      (d) => ({ ...d, kubeconfig: `${d.kubeconfig as string} ` }),
      "its kubeconfig is not the one gitfleet writes",
    ],
    ["a CA file that is not the cluster CA", (d) => ({ ...d, "ca.crt": "x" }), "its CA changed"],
  ])("re-issues a component's kubeconfig Secret holding %s", async (_name, edit, reason) => {
    const host = applied(new Map(), await planCredentials(plane, new Map(), NOW));
    const key = "gitfleet-cp-pc-1/scheduler-kubeconfig";
    host.set(key, edit(host.get(key) as SecretData));
    const plan = await planCredentials(plane, host, NOW + DAY);
    expect(plan.writes.map((w) => w.name)).toEqual(["scheduler-kubeconfig"]);
    expect(plan.records.find((r) => r.name === "scheduler-kubeconfig")).toMatchObject({
      action: "reissued",
      reason,
    });
  });

  it("keeps what is current byte for byte, and renews leaves before they expire but not their CAs", async () => {
    const host = applied(new Map(), await planCredentials(plane, new Map(), NOW));
    const again = await planCredentials(plane, host, NOW + DAY);
    expect(again.writes).toEqual([]);
    expect(again.records.every((r) => r.action === "kept")).toBe(true);
    // 100 days of validity, renewed 10 days before: on day 91 every leaf (and kubeconfig) is renewed.
    const later = await planCredentials(plane, host, NOW + 91 * DAY);
    const renewed = later.records
      .filter((r) => r.action !== "kept")
      .map((r) => r.name)
      .sort();
    expect(renewed).toEqual([
      "admin-kubeconfig",
      "apiserver-etcd-client",
      "apiserver-serving",
      "controller-manager-kubeconfig",
      "etcd-serving",
      "front-proxy-client",
      "scheduler-kubeconfig",
    ]);
    expect(later.records.filter((r) => r.action === "renewed")).toHaveLength(7);
    for (const r of later.records.filter((r) => r.action === "renewed"))
      expect(r.reason).toMatch(/^expires 2027-03-1/);
    // The renewed serving certificate still chains to the same CA.
    const after = applied(host, later);
    expect(after.get("gitfleet-cp-pc-1/ca")).toBe(host.get("gitfleet-cp-pc-1/ca"));
    expect(after.get("gitfleet-cp-pc-1/service-account")).toBe(host.get("gitfleet-cp-pc-1/service-account"));
    file("ca2.crt", after.get("gitfleet-cp-pc-1/ca")?.["tls.crt"] as string);
    file("apiserver2.crt", after.get("gitfleet-cp-pc-1/apiserver-serving")?.["tls.crt"] as string);
    expect(verify(NOW + 91 * DAY, "ca2.crt", "apiserver2.crt")).toContain(": OK");
  });

  it("serves a plan that wrote nothing again only until its first renewal is due", async () => {
    const host = applied(new Map(), await planCredentials(plane, new Map(), NOW));
    const kept = await planCredentials(plane, host, NOW + DAY);
    expect(kept.writes).toEqual([]);
    const renewBefore = 240 * 3_600_000;
    const due =
      Math.min(...kept.records.flatMap((r) => (r.notAfter ? [Date.parse(r.notAfter)] : []))) - renewBefore;
    // Just before, at and just after the first renewal; then before it again, once a plan at it wrote.
    for (const [at, renewed] of [
      [due - 1, 0],
      [due, 7],
      [due + 1, 7],
      [due - 1, 0],
    ] as const) {
      const plan = await planCredentials(plane, host, at);
      expect(plan.writes, `at due${at - due >= 0 ? "+" : ""}${at - due} ms`).toHaveLength(renewed);
    }
    // A Secret that changed is a different input: its plan is made again.
    const edited = new Map(host);
    edited.set("gitfleet-cp-pc-1/admin-kubeconfig", { kubeconfig: "apiVersion: v1\nkind: Config\n" });
    const again = await planCredentials(plane, edited, NOW + DAY);
    expect(again.records.find((r) => r.name === "admin-kubeconfig")?.action).toBe("reissued");
  });

  it("re-issues what a new CA or new names invalidate, and replaces what does not parse", async () => {
    const host = applied(new Map(), await planCredentials(plane, new Map(), NOW));
    // The API server gets a new address: its serving certificate and the admin kubeconfig follow.
    const moved = resolveControlPlane(
      cluster({ type: "LoadBalancer", address: "198.51.100.7" }),
      new Map([["standard", CLASS]]),
    );
    const readdressed = await planCredentials(moved as NonNullable<typeof moved>, host, NOW + DAY);
    expect(
      readdressed.records.filter((r) => r.action !== "kept").map((r) => `${r.name} ${r.action} ${r.reason}`),
    ).toEqual([
      "apiserver-serving reissued the names it is reached by changed",
      "admin-kubeconfig reissued its server or CA changed",
    ]);
    // A CA that does not parse is replaced, and everything it signed with it.
    const broken = new Map(host);
    broken.set("gitfleet-cp-pc-1/ca", { "tls.crt": "not a certificate", "tls.key": "" });
    const recovered = await planCredentials(plane, broken, NOW + DAY);
    const changed = recovered.records.filter((r) => r.action !== "kept").map((r) => r.name);
    expect(changed).toEqual([
      "ca",
      "apiserver-serving",
      "admin-kubeconfig",
      "controller-manager-kubeconfig",
      "scheduler-kubeconfig",
    ]);
    expect(recovered.records.find((r) => r.name === "ca")?.reason).toBe("it did not parse");
  });

  it("shares one etcd CA and serving certificate among the clusters of a shared etcd", async () => {
    const shared = (name: string) =>
      resolveControlPlane(
        {
          ...cluster({ type: "LoadBalancer" }),
          metadata: { name },
          spec: {
            controlPlane: {
              host: "meta-1",
              class: "standard",
              etcd: { mode: "Shared", name: "etcd-a" },
              expose: { type: "LoadBalancer" },
            },
          },
        },
        new Map([["standard", CLASS]]),
      ) as NonNullable<ReturnType<typeof resolveControlPlane>>;
    const first = await planCredentials(shared("pc-1"), new Map(), NOW);
    const second = await planCredentials(shared("pc-2"), applied(new Map(), first), NOW, first.etcdCa);
    expect(first.writes.map((w) => `${w.namespace}/${w.name}`)).toContain(
      "gitfleet-etcd-etcd-a/etcd-serving",
    );
    expect(
      second.writes.map((w) => `${w.namespace}/${w.name}`).filter((n) => n.startsWith("gitfleet-etcd-")),
    ).toEqual([]);
    const clientOf = (plan: typeof first, ns: string) =>
      plan.writes.find((w) => w.namespace === ns && w.name === "apiserver-etcd-client")?.data;
    expect(clientOf(second, "gitfleet-cp-pc-2")?.["ca.crt"]).toBe(
      clientOf(first, "gitfleet-cp-pc-1")?.["ca.crt"],
    );
  });
});
