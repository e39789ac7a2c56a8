import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { MemberCredentials } from "../../src/kube/connections.js";
import { CREDENTIAL_PASSES } from "../../src/kube/hosted-credentials.js";
import { MemberClient } from "../../src/kube/member-client.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { freePort } from "../helpers/free-port.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import { hostedPair, putAdminKubeconfig } from "../helpers/hosted-example.js";
import { clientConfig } from "../helpers/member.js";
import {
  liveObject,
  membersPerTest,
  pushController,
  statusFile as statusFileOf,
} from "../helpers/sync-fleet.js";
import { startTlsFront } from "../helpers/tls-front.js";

/**
 * The credentials step against a host that speaks the Kubernetes API over HTTP (a simulated member):
 * a hosted cluster's certificates and kubeconfigs are generated into Secrets in its host once, kept
 * across syncs, renewed when due (a status commit says so), recorded on the status branch by
 * fingerprint and expiry only, protected from pruning, and the hosted cluster is reached at the
 * endpoint its Cluster file gives with the client certificate read from the host.
 */
const fleet = membersPerTest("gitfleet-hosted-", ["meta", "stand-in"]);
const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const statusFile = (path: string) => statusFileOf(fleet.dir, path);
const secret = async (name: string) =>
  liveObject(member("meta"), `/api/v1/namespaces/gitfleet-cp-pc-1/secrets/${name}`);
const pem = (object: JsonMap | undefined, key = "tls.crt") =>
  Buffer.from(String(asMap(object?.data)[key] ?? ""), "base64").toString("utf8");
const fingerprintOf = (certificate: string) =>
  `sha256:${new X509Certificate(certificate).fingerprint256.replaceAll(":", "").toLowerCase()}`;

const encode = (files: Record<string, string>) =>
  new Map(Object.entries(files).map(([path, text]) => [path, new TextEncoder().encode(text)]));

function hostedFleet(certificates = "validity: 8760h\n    renewBefore: 720h"): Record<string, string> {
  return {
    "fleet.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: hosted\nspec: {}\n",
    "clusters/meta.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta\nspec: {}\n",
    "clusters/pc-1.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: pc-1\nspec:\n  controlPlane:\n    host: meta\n    class: standard\n    expose: { type: NodePort, port: 31999, address: 127.0.0.1 }\n",
    "controlplanes/standard.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: ControlPlaneClass\nmetadata:\n  name: standard\nspec:\n  version: v1.34.1\n  apiServer: { replicas: 1 }\n  etcd: { version: 3.6.4-0 }\n  certificates:\n    ${certificates}\n`,
  };
}

describe("hosted control planes: credentials in the host", () => {
  it("generates them once into the host, keeps them, renews them when due, and records fingerprints only", async () => {
    // Certificates valid for an hour, renewed in their last half hour.
    createRepo(fleet.dir, encode(hostedFleet("validity: 1h\n    renewBefore: 30m")));
    const { round } = await pushController(fleet.dir, fleet.kubeconfig);
    await round();
    // The rendered, data-less Secret and the generated data live side by side in one object.
    const ca = await secret("ca");
    expect(pem(ca)).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(asMap(asMap(ca?.metadata).labels)["app.kubernetes.io/managed-by"]).toBe("gitfleet");
    const serving = await secret("apiserver-serving");
    const admin = Buffer.from(
      String(asMap((await secret("admin-kubeconfig"))?.data).kubeconfig),
      "base64",
    ).toString();
    expect(JSON.parse(admin).clusters[0].cluster.server).toBe("https://127.0.0.1:31999");
    // The status branch: fingerprints and expiry, equal to what the host holds.
    const recorded = asMap(
      asMap(asMap(statusFile("status/clusters/meta.yaml").observed).hostedControlPlanes)["pc-1"],
    );
    const credentials = asMap(recorded.credentials);
    expect(Object.keys(credentials).sort()).toEqual(
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
      ].map((name) => `gitfleet-cp-pc-1/${name}`),
    );
    expect(asMap(credentials["gitfleet-cp-pc-1/apiserver-serving"]).fingerprint).toBe(
      fingerprintOf(pem(serving)),
    );
    expect(asMap(credentials["gitfleet-cp-pc-1/ca"]).notAfter).toBe(
      new Date(new X509Certificate(pem(ca)).validTo).toISOString(),
    );
    expect(gitIn(fleet.dir, "log", "--format=%B", "gitfleet/status")).toMatch(
      /meta: credentials of pc-1 created: ca, front-proxy-ca, etcd-ca, apiserver-serving/,
    );

    // Another sync keeps every credential as it is.
    await round();
    expect(asMap((await secret("ca"))?.metadata).resourceVersion).toBe(asMap(ca?.metadata).resourceVersion);
    expect(asMap((await secret("apiserver-serving"))?.metadata).resourceVersion).toBe(
      asMap(serving?.metadata).resourceVersion,
    );

    // A class whose certificates live shorter than their renewal window: the next sync renews every leaf, not the CAs.
    commitTree(
      fleet.dir,
      encode(hostedFleet("validity: 1h\n    renewBefore: 2h")),
      "short-lived certificates",
    );
    await round();
    expect(pem(await secret("ca"))).toBe(pem(ca));
    expect(pem(await secret("apiserver-serving"))).not.toBe(pem(serving));
    expect(gitIn(fleet.dir, "log", "--format=%B", "gitfleet/status")).toMatch(
      /meta: credentials of pc-1 renewed: apiserver-serving, front-proxy-client, apiserver-etcd-client, etcd-serving, admin-kubeconfig, controller-manager-kubeconfig, scheduler-kubeconfig \(expires /,
    );
    // No key or certificate body anywhere in the status branch's history.
    const history = gitIn(fleet.dir, "log", "-p", "gitfleet/status");
    expect(history).not.toMatch(/BEGIN|PRIVATE KEY|client-key-data/);
  });

  it("brings many control planes up to date at once, those sharing an etcd on that etcd's one CA", async () => {
    // More planes than passes run at once; three share the etcd "pool" (and its CA), the rest have their own.
    const files = hostedFleet();
    const names = Array.from({ length: CREDENTIAL_PASSES + 4 }, (_, i) => `pc-${i + 1}`);
    const shared = new Set(["pc-2", "pc-7", "pc-11"]);
    for (const [i, name] of names.entries())
      files[`clusters/${name}.yaml`] =
        `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\nspec:\n  controlPlane:\n    host: meta\n    class: standard\n    expose: { type: NodePort, port: ${31000 + i}, address: 127.0.0.1 }\n` +
        (shared.has(name) ? "    etcd: { mode: Shared, name: pool }\n" : "");
    createRepo(fleet.dir, encode(files));
    const { round } = await pushController(fleet.dir, fleet.kubeconfig);
    await round();
    const read = async (path: string) => pem(await liveObject(member("meta"), path));
    const etcdClientOf = async (name: string) =>
      new X509Certificate(await read(`/api/v1/namespaces/gitfleet-cp-${name}/secrets/apiserver-etcd-client`));
    const poolCa = new X509Certificate(await read("/api/v1/namespaces/gitfleet-etcd-pool/secrets/etcd-ca"));
    const issuers = new Set<string>();
    for (const name of names) {
      const client = await etcdClientOf(name);
      if (shared.has(name)) expect(client.verify(poolCa.publicKey)).toBe(true);
      else {
        const own = new X509Certificate(await read(`/api/v1/namespaces/gitfleet-cp-${name}/secrets/etcd-ca`));
        expect(client.verify(own.publicKey)).toBe(true);
        expect(client.verify(poolCa.publicKey)).toBe(false);
        issuers.add(own.fingerprint256);
      }
    }
    // Every dedicated etcd has a CA of its own.
    expect(issuers.size).toBe(names.length - shared.size);
    // The status branch lists every plane's credentials, none failed, in the fleet's order.
    const recorded = asMap(asMap(statusFile("status/clusters/meta.yaml").observed).hostedControlPlanes);
    expect(Object.keys(recorded)).toEqual([...names].sort());
    for (const name of names) expect(asMap(recorded[name]).error).toBeUndefined();
  });

  it("keeps the control plane and its credentials when the Cluster file goes, until a commit allows the prune", async () => {
    createRepo(fleet.dir, encode(hostedFleet()));
    const { round } = await pushController(fleet.dir, fleet.kubeconfig);
    await round();
    const { "clusters/pc-1.yaml": _gone, ...without } = hostedFleet();
    commitTree(fleet.dir, encode(without), "remove pc-1");
    await round();
    const blocked = asMap(asMap(statusFile("status/clusters/meta.yaml").observed).pruneBlocked);
    expect(String(blocked.reasons)).toContain("Secret gitfleet-cp-pc-1/ca");
    expect(String(blocked.reasons)).toContain("Namespace gitfleet-cp-pc-1");
    expect(pem(await secret("ca"))).toMatch(/^-----BEGIN CERTIFICATE-----/);
    // The token in a reviewed commit lets the whole control plane go.
    commitTree(
      fleet.dir,
      encode({
        ...without,
        "fleet.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: hosted\nspec:\n  pruning:\n    allowPrune: "${String(blocked.token)}"\n`,
      }),
      "allow removing pc-1's control plane",
    );
    await round();
    expect(
      await liveObject(
        member("meta"),
        "/apis/apps/v1/namespaces/gitfleet-cp-pc-1/deployments/kube-apiserver",
      ),
    ).toBeUndefined();
    expect(await secret("ca")).toBeUndefined();
  });

  it("reaches a hosted cluster at the endpoint its Cluster file gives, with the certificates its host holds", async () => {
    const port = await freePort();
    const expose = `{ type: HostPort, port: ${port}, address: 127.0.0.1 }`;
    const files = hostedFleet();
    files["clusters/pc-1.yaml"] = (files["clusters/pc-1.yaml"] as string).replace(
      /expose: .*/,
      `expose: ${expose}`,
    );
    createRepo(fleet.dir, encode(files));
    const { round } = await pushController(fleet.dir, fleet.kubeconfig);
    await round();
    // The hosted API server: the serving certificate gitfleet generated, client certificates of its CA
    // required (a TLS front for the stand-in member, which speaks plain HTTP).
    const serving = await secret("apiserver-serving");
    const front = await startTlsFront({
      port,
      cert: pem(serving),
      key: pem(serving, "tls.key"),
      ca: pem(await secret("ca")),
      target: member("stand-in").url,
    });
    try {
      const { host: hostCluster, hosted } = hostedPair({ type: "HostPort", port, address: "127.0.0.1" });
      const credentials = new MemberCredentials({ kubeconfig: fleet.kubeconfig, env: {} });
      const connection = (await credentials.resolve([hostCluster, hosted])).find((c) => c.cluster === "pc-1");
      if (!connection || !("config" in connection) || !connection.config)
        throw new Error(JSON.stringify(connection));
      const client = new MemberClient("pc-1", connection.config);
      expect(client.server).toBe(`https://127.0.0.1:${port}`);
      expect(await client.probe()).toEqual({ outcome: "ready" });
      expect(front.clients).toContain("kubernetes-admin");
    } finally {
      await front.close();
    }
  });

  it("says so while the host holds no admin kubeconfig, and never loads the one it holds as a kubeconfig", async () => {
    const hostClient = new MemberClient("meta", clientConfig(member("meta")));
    const { host: hostCluster, hosted } = hostedPair({ type: "LoadBalancer" });
    const credentials = new MemberCredentials({ kubeconfig: fleet.kubeconfig, env: {} });
    const before = await credentials.resolve([hostCluster, hosted]);
    expect(before.find((c) => c.cluster === "pc-1")).toEqual({
      cluster: "pc-1",
      mode: "push",
      error: "host meta holds no admin kubeconfig for it yet (gitfleet writes it after syncing the host)",
    });
    // A kubeconfig that would run a plugin (any kubeconfig loader would run it) is refused by name.
    const plugin = JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: "pc-1", cluster: { server: member("stand-in").url, "insecure-skip-tls-verify": true } },
      ],
      users: [
        { name: "u", user: { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "/bin/sh" } } },
      ],
      contexts: [{ name: "pc-1", context: { cluster: "pc-1", user: "u" } }],
      "current-context": "pc-1",
    });
    await putAdminKubeconfig(hostClient, plugin);
    const refused = (await credentials.resolve([hostCluster, hosted])).find((c) => c.cluster === "pc-1");
    expect(refused).toEqual({
      cluster: "pc-1",
      mode: "push",
      error:
        "its admin kubeconfig in host meta holds exec, insecure-skip-tls-verify, which gitfleet never writes; it is not used",
    });
  });
  it("copies the operator's backup store into the host for a class that sends backups off it, follows a rotated key, and says why it cannot", async () => {
    const offHost = (files: Record<string, string>) => ({
      ...files,
      "controlplanes/standard.yaml": files["controlplanes/standard.yaml"]?.replace(
        "  etcd: { version: 3.6.4-0 }\n",
        "  etcd:\n    version: 3.6.4-0\n    backup: { offHost: { store: offsite, image: registry.example.com/gitfleet:0.1.0 } }\n",
      ) as string,
    });
    createRepo(fleet.dir, encode(offHost(hostedFleet())));
    // What gitfleet run reads from --backup-stores-dir/offsite (validated there), one version then another.
    let version = 1;
    let asked: string[] = [];
    const stores = {
      async files(store: string) {
        asked.push(store);
        if (version === 0) throw new Error("secret-access-key is not one printable word");
        return { endpoint: "https://s3.example.com", bucket: "fleet", "access-key-id": `writer-${version}` };
      },
      // No restore runs here: nothing is fetched.
      fetch: async (store: string): Promise<never> => {
        throw new Error(`a backup of ${store} was fetched`);
      },
    };
    const { round } = await pushController(fleet.dir, fleet.kubeconfig, {}, { backupStores: stores });
    await round();
    const data = async () =>
      Object.fromEntries(
        Object.entries(asMap((await secret("etcd-backup-store"))?.data)).map(([k, v]) => [
          k,
          Buffer.from(String(v), "base64").toString(),
        ]),
      );
    expect(asked).toEqual(["offsite"]);
    expect(await data()).toEqual({
      endpoint: "https://s3.example.com",
      bucket: "fleet",
      "access-key-id": "writer-1",
    });
    version = 2;
    await round();
    expect((await data())["access-key-id"]).toBe("writer-2");
    // A store that cannot be given: the credentials are kept, the status says why, the Secret keeps its last data.
    version = 0;
    asked = [];
    await round();
    expect(asked).toEqual(["offsite"]);
    const recorded = asMap(
      asMap(asMap(statusFile("status/clusters/meta.yaml").observed).hostedControlPlanes)["pc-1"],
    );
    expect(recorded.backupStoreError).toBe(
      "backup store offsite: secret-access-key is not one printable word",
    );
    expect(Object.keys(asMap(recorded.credentials))).toContain("gitfleet-cp-pc-1/ca");
    expect((await data())["access-key-id"]).toBe("writer-2");
    // No store file's value reaches the status branch.
    expect(gitIn(fleet.dir, "log", "-p", "gitfleet/status")).not.toContain("writer-");
  });
});
