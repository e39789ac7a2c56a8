import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import { REQUIRED_PKI } from "../../src/backup/backup-contents.js";
import { listBackups, pullBackup } from "../../src/backup/pull.js";
import { pushBackup } from "../../src/backup/push.js";
import type { BackupStore } from "../../src/backup/store-config.js";
import { backupStoresIn } from "../../src/cli/backup-stores.js";
import type { BackupStores } from "../../src/kube/backup-store-secret.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { fetchOffHostBackup } from "../../src/kube/restore-fetch.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import {
  type HostedControlPlane,
  resolveControlPlanes,
} from "../../src/model/controlplane/hosted-control-plane.js";
import type { FileTree } from "../../src/model/file-tree.js";
import type { FleetModel, RestoreOverlay } from "../../src/model/types.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { offsiteExample } from "../helpers/hosted-example.js";
import { type RunningStore, startS3Store } from "../helpers/s3-store.js";
import { type AgeKey, ageKey } from "../helpers/sops.js";

// An off-host restore's fetch, as the credentials step runs it in the host (a simulated member over
// HTTP) against a real S3-compatible store: the backup opened with the store's identity, its CAs and
// service-account key written back into the control plane's Secrets, its snapshot staged for the
// restore's own key, and that key handed to the host last. The PKI files are random text stand-ins.
describe("fetching an off-host backup for a restore", () => {
  let running: RunningStore;
  let member: SimulatedMember;
  let client: MemberClient;
  let dir: string;
  let operator: AgeKey;
  let store: BackupStore;
  let model: FleetModel;
  const pki = new Map<string, string>();
  const snapshot = randomBytes(300 * 1024);
  let identityReads = 0;
  let identityError: string | undefined;

  const storeFiles = () => ({
    endpoint: running.endpoint.href,
    bucket: running.bucket,
    prefix: "hosted",
    "access-key-id": running.key.accessKeyId,
    "secret-access-key": running.key.secretAccessKey,
    recipients: `${operator.recipient}\n`,
  });
  // The stores as gitfleet run reads them (cli/backup-stores.ts) from a directory laid out as
  // --backup-stores-dir: the store's files, and its identity file while a case does not take it away.
  let storesDir: string;
  const stores: BackupStores = {
    files: (store) => backupStoresIn(storesDir).files(store),
    fetch: (store, request) => {
      identityReads++;
      const identity = join(storesDir, store, "identity");
      if (identityError) rmSync(identity, { force: true });
      else writeFileSync(identity, `# gitfleet's restore key\n${operator.identity}\n`);
      return backupStoresIn(storesDir).fetch(store, request);
    },
  };

  beforeAll(async () => {
    running = await startS3Store();
    member = await startMember({ name: "meta-1" });
    client = new MemberClient("meta-1", memberClientConfig(member), { retries: 0, timeoutMs: 10_000 });
    dir = mkdtempSync(join(tmpdir(), "gitfleet-restore-fetch-"));
    operator = await ageKey();
    storesDir = join(dir, "stores");
    mkdirSync(join(storesDir, "offsite"), { recursive: true });
    for (const [name, text] of Object.entries(storeFiles()))
      writeFileSync(join(storesDir, "offsite", name), text);
    store = {
      location: { endpoint: running.endpoint, region: "us-east-1", bucket: running.bucket },
      prefix: "hosted/",
      key: running.key,
      recipients: [operator.recipient],
    };
    const tree = await offsiteExample();
    const loaded = loadFleet(tree as FileTree);
    expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
    model = loaded.model as FleetModel;
    // The backup, as pc-3's backup Job on its lost host pushed it.
    mkdirSync(join(dir, "pki"));
    for (const entry of [...REQUIRED_PKI, "pki/ca/previous.crt"]) {
      const text = `${entry}:${randomBytes(600).toString("hex")}\n`;
      pki.set(entry, text);
      mkdirSync(join(dir, entry, ".."), { recursive: true });
      writeFileSync(join(dir, entry), text);
    }
    writeFileSync(join(dir, "etcd-0.db"), snapshot);
    await pushBackup({
      cluster: "pc-3",
      snapshot: join(dir, "etcd-0.db"),
      pkiDir: join(dir, "pki"),
      store,
      workDir: dir,
      now: new Date("2026-12-06T09:30:00Z"),
    });
    await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "gitfleet-cp-pc-3" } }, true);
  }, 120_000);
  afterAll(async () => {
    await member?.close();
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const planFor = (cluster: string, overlay: RestoreOverlay): HostedControlPlane => {
    const entry = resolveControlPlanes(model, "meta-1", {
      versions: new Map(),
      restores: new Map([[cluster, overlay]]),
    }).find((e) => e.plane.cluster === cluster);
    return entry?.plane as HostedControlPlane;
  };
  const secretData = async (name: string, namespace = "gitfleet-cp-pc-3") =>
    Object.fromEntries(
      Object.entries(
        asMap((await client.get({ apiVersion: "v1", kind: "Secret", namespace, name }))?.data),
      ).map(([k, v]) => [k, Buffer.from(String(v), "base64").toString("utf8")]),
    );
  const fetching = (backup: string, name = "back", startedIn = "a".repeat(40)): RestoreOverlay => ({
    name,
    snapshot: backup,
    phase: "Fetching",
    backup,
    startedIn,
  });

  it("writes the CAs and the service-account key back, stages the snapshot for the restore's key, and does it once", async () => {
    const [backup] = await listBackups(store, "pc-3");
    const plane = planFor("pc-3", fetching("latest"));
    const fetched = await fetchOffHostBackup(client, plane, fetching("latest"), stores, new Date());
    expect(fetched).toBe(backup?.key);
    // Each backed-up Secret holds what the backup held, an overlap's previous certificate included.
    expect(await secretData("ca")).toEqual({
      "tls.crt": pki.get("pki/ca/tls.crt"),
      "tls.key": pki.get("pki/ca/tls.key"),
      "previous.crt": pki.get("pki/ca/previous.crt"),
    });
    expect(await secretData("front-proxy-ca")).toEqual({
      "tls.crt": pki.get("pki/front-proxy-ca/tls.crt"),
      "tls.key": pki.get("pki/front-proxy-ca/tls.key"),
    });
    expect(await secretData("etcd-ca")).toEqual({
      "tls.crt": pki.get("pki/etcd-ca/tls.crt"),
      "tls.key": pki.get("pki/etcd-ca/tls.key"),
    });
    expect(await secretData("service-account")).toEqual({
      "sa.key": pki.get("pki/service-account/sa.key"),
      "sa.pub": pki.get("pki/service-account/sa.pub"),
    });
    // The restore's key, and the staged snapshot it opens: the snapshot alone.
    const restoreKey = await secretData("etcd-restore-back-key");
    expect(restoreKey.from).toBe(backup?.key);
    expect(restoreKey.identity).toMatch(/^AGE-SECRET-KEY-1[0-9A-Z]+\n$/);
    const into = join(dir, "staged");
    const pulled = await pullBackup({
      store,
      cluster: "pc-3",
      staged: "back",
      identities: [restoreKey.identity?.trim() as string],
      into,
      workDir: dir,
      maxBytes: 10 << 20,
    });
    expect(pulled.files).toEqual(["backup.json", "snapshot.db"]);
    // The members' volume claims, made as the StatefulSet would make them on a host it never ran on.
    const claims = (
      (await client.list("v1", "PersistentVolumeClaim", "", "metadata.namespace=gitfleet-cp-pc-3")) ?? []
    ).map((c) => ({
      name: String(asMap(c.metadata).name),
      labels: asMap(asMap(c.metadata).labels),
      storage: asMap(asMap(asMap(c.spec).resources).requests).storage,
    }));
    expect(claims.map((c) => c.name).sort()).toEqual(["data-etcd-0", "data-etcd-1", "data-etcd-2"]);
    for (const c of claims) {
      expect(c.labels["gitfleet.io/hosted-cluster"], c.name).toBe("pc-3");
      expect(c.storage, c.name).toBe(plane.etcd.storage);
    }
    // The operator's identity is in no Secret of the host.
    const secrets = (await client.list("v1", "Secret", "", "metadata.namespace=gitfleet-cp-pc-3")) ?? [];
    expect(secrets.map((x) => asMap(x.metadata).name)).toContain("etcd-restore-back-key");
    const identityB64 = Buffer.from(operator.identity).toString("base64");
    expect(JSON.stringify(secrets)).not.toContain(identityB64.slice(0, 40));
    expect(JSON.stringify(secrets)).not.toContain(operator.identity);
    // Done once: a second pass reads the restore's Secret and opens nothing.
    const reads = identityReads;
    expect(await fetchOffHostBackup(client, plane, fetching("latest"), stores, new Date())).toBe(backup?.key);
    expect(identityReads).toBe(reads);
    // A restore of the same name started at another commit is another restore: it fetches again, for a key of its own.
    const later = fetching("latest", "back", "b".repeat(40));
    expect(await fetchOffHostBackup(client, plane, later, stores, new Date())).toBe(backup?.key);
    expect(identityReads).toBe(reads + 1);
    const again = await secretData("etcd-restore-back-key");
    expect(again["started-in"]).toBe("b".repeat(40));
    expect(again.identity).not.toBe(restoreKey.identity);
  });

  it.each([
    [
      "the store has no identity file",
      "latest",
      "identity: the file does not exist (gitfleet needs it to bring a backup back)",
      "identity: the file does not exist",
    ],
    ["the store holds no backup of the cluster", "latest", undefined, "the store holds no backup of pc-9"],
    [
      "the key names another cluster's backup",
      "hosted/pc-1/20261206T093000Z-etcd-0.tar.age",
      undefined,
      "hosted/pc-1/20261206T093000Z-etcd-0.tar.age is not a backup of pc-9 in this store",
    ],
  ])("fails, writing nothing, when %s", async (_name, backup, error, message) => {
    identityError = error;
    try {
      // pc-9: a cluster of the same class with no backup; its namespace is made here.
      const plane = { ...planFor("pc-3", fetching(backup, "other")), cluster: "pc-9" };
      await expect(
        fetchOffHostBackup(client, plane, fetching(backup, "other"), stores, new Date()),
      ).rejects.toThrow(message);
      expect(await secretData("etcd-restore-other-key")).toEqual({});
    } finally {
      identityError = undefined;
    }
  });

  it("says why when gitfleet runs without the stores or the class sends nothing off the host", async () => {
    const plane = planFor("pc-3", fetching("latest", "third"));
    await expect(
      fetchOffHostBackup(client, plane, fetching("latest", "third"), undefined, new Date()),
    ).rejects.toThrow("backup store offsite: gitfleet runs without --backup-stores-dir");
    const kept = { ...plane, etcd: { ...plane.etcd, backup: { ...plane.etcd.backup, offHost: undefined } } };
    await expect(
      fetchOffHostBackup(client, kept, fetching("latest", "third"), stores, new Date()),
    ).rejects.toThrow("its class sends no backup off the host");
  });
});
