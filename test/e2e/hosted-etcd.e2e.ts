import "reflect-metadata";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import type { MemberClient } from "../../src/kube/member-client.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { pushController, statusFile } from "../helpers/sync-fleet.js";
import { emptyEtcd, fillEtcd, writeSmall } from "./cluster/etcd-quota.js";
import { buildReleases, type Host, hostedClient, restorePhases, startHost } from "./cluster/hosted-host.js";
import type { PodNetwork } from "./cluster/pod-network.js";

/**
 * A hosted cluster whose dedicated etcd has three members, with the real binaries: the host's node runs
 * pods as processes, each off the host network in a network namespace of its own (cluster/pod-network.ts
 * stands in for the CNI, cluster DNS and a LoadBalancer), so the members find each other by their
 * StatefulSet names as in any cluster, and the API server is reached at its LoadBalancer address.
 */

const CLUSTER = "pc-ha";
const NAMESPACE = `gitfleet-cp-${CLUSTER}`;

let meta: Host;
let network: PodNetwork;
let repo: { dir: string; cleanup: () => void };
let controller: Awaited<ReturnType<typeof pushController>>;
/** The hosted cluster's client, once its API server answers. */
let hosted: MemberClient;
// An object made once the members formed, which the restore brings back, and when it was made.
const KEPT = "before-the-snapshot";
let keptAt = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const encode = (files: Record<string, string>) =>
  new Map(Object.entries(files).map(([path, text]) => [path, new TextEncoder().encode(text)]));

let files: Record<string, string> = {};

function fleetFiles(version: string, etcdTag: string, address: string): Record<string, string> {
  return {
    "fleet.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: hosted-etcd
spec:
  kubernetesVersion: "1.36"
  clusterHealth: { probeInterval: 1s, probeTimeout: 2s, failureThreshold: 2, successThreshold: 1 }
`,
    "clusters/meta-1.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-1\nspec: {}\n",
    [`clusters/${CLUSTER}.yaml`]: `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: ${CLUSTER}
spec:
  controlPlane:
    host: meta-1
    class: ha
    expose: { type: LoadBalancer, address: ${address} }
`,
    "controlplanes/ha.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneClass
metadata:
  name: ha
spec:
  version: ${version}
  apiServer:
    replicas: 1
    extraArgs: { endpoint-reconciler-type: none, enable-priority-and-fairness: "false" }
  controllerManager: { replicas: 1 }
  scheduler: { replicas: 1 }
  etcd:
    version: ${etcdTag}
    replicas: 3
    storage: 1Gi
    quota: 32Mi
    backup: { schedule: "* * * * *", storage: 1Gi }
    defrag: { schedule: "* * * * *" }
    repair: { notReadyFor: 10s }
`,
  };
}

// The etcd of a hosted cluster as the host's status records it.
function etcdStatus(cluster = CLUSTER): JsonMap {
  const observed = asMap(statusFile(repo.dir, "status/clusters/meta-1.yaml").observed);
  return asMap(asMap(asMap(observed.hostedControlPlanes)[cluster]).etcd);
}

// A writer of ConfigMaps into the hosted cluster, one every 100 ms, counting what went through and
// when what failed failed.
function startWriter(client: MemberClient): {
  written: () => number;
  failed: () => { at: number; error: string }[];
  stop: () => Promise<void>;
} {
  let written = 0;
  const failed: { at: number; error: string }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      await client
        .raw("POST", "/api/v1/namespaces/default/configmaps", {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { generateName: "write-" },
          data: { at: new Date().toISOString() },
        })
        .then(() => written++)
        .catch((error: unknown) => failed.push({ at: Date.now(), error: String(error) }));
      await sleep(100);
    }
  })();
  return {
    written: () => written,
    failed: () => failed,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Rounds of the controller until `done` holds. */
async function until(what: string, done: () => Promise<boolean>, timeoutMs = 240_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await controller.prober.probeOnce();
    await controller.round();
    if (await done().catch(() => false)) return;
    await sleep(500);
  }
  throw new Error(`${what}: not reached in ${timeoutMs / 1000} s`);
}

const MEMBERS = ["etcd-0", "etcd-1", "etcd-2"];

// Two hosted clusters whose data lives in one shared etcd of three members.
const SHARED_CLUSTERS = ["pe-a", "pe-b"];
const SHARED_NAMESPACE = "gitfleet-etcd-shared";
const SHARED_MEMBERS = ["shared-0", "shared-1", "shared-2"];

function sharedFiles(pods: PodNetwork): Record<string, string> {
  const clusters = SHARED_CLUSTERS.map((name, i) => [
    `clusters/${name}.yaml`,
    `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: ${name}
spec:
  controlPlane:
    host: meta-1
    class: ha-shared
    etcd: { mode: Shared, name: shared }
    expose: { type: LoadBalancer, address: ${pods.loadBalancerAddress(2 + i)} }
`,
  ]);
  const ha = files["controlplanes/ha.yaml"] as string;
  return {
    ...Object.fromEntries(clusters),
    // The class of the dedicated etcd above, without its backups, defragmentation and quota.
    "controlplanes/ha-shared.yaml": ha
      .replace("name: ha\n", "name: ha-shared\n")
      .replace(/ {4}quota: .*\n/, "")
      .replace(/ {4}backup: .*\n/, "")
      .replace(/ {4}defrag: .*\n/, ""),
  };
}

// A member's own metrics, read at its pod's address as Prometheus scrapes them.
async function metric(member: string, name: string, namespace = NAMESPACE): Promise<number | undefined> {
  const ip = meta.runtime.addressOf(namespace, member);
  if (!ip) return undefined;
  const text = await fetch(`http://${ip}:2381/metrics`, { signal: AbortSignal.timeout(2000) })
    .then((r) => r.text())
    .catch(() => "");
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(" ")[1]);
}

async function readyMembers(namespace = NAMESPACE): Promise<string[]> {
  const pods = asList(
    asMap(
      await meta.client.raw(
        "GET",
        `/api/v1/namespaces/${namespace}/pods?labelSelector=app.kubernetes.io%2Fcomponent%3Detcd`,
      ),
    ).items,
  ).map((p) => asMap(p));
  return pods
    .filter((p) =>
      asList(asMap(p.status).conditions).some((c) => asMap(c).type === "Ready" && asMap(c).status === "True"),
    )
    .map((p) => String(asMap(p.metadata).name))
    .sort();
}

beforeAll(async () => {
  const releases = buildReleases();
  meta = await startHost(releases, { podNetwork: true });
  network = meta.runtime.podNetwork as PodNetwork;
  repo = tempDir("gitfleet-e2e-hosted-etcd-");
  files = fleetFiles(releases.version, `${releases.etcd}-0`, network.loadBalancerAddress(1));
  createRepo(repo.dir, encode(files));
  controller = await pushController(repo.dir, meta.planes.kubeconfig);
}, 900_000);

afterAll(async () => {
  await meta?.stop();
  repo?.cleanup();
});

describe("a three-member etcd with the real binaries", () => {
  it("three members, each at its own address, form one etcd; the API server answers at its LoadBalancer address", async () => {
    const started = Date.now();
    await until("the hosted API server Ready", async () => {
      const client = await hostedClient(meta.client, CLUSTER);
      if ((await client?.probe())?.outcome !== "ready") return false;
      hosted = client as MemberClient;
      return true;
    });
    await until("three etcd members Ready", async () => (await readyMembers()).length === 3);
    console.log(
      `e2e hosted etcd: commit → API server Ready and three members Ready ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const addresses = MEMBERS.map((m) => meta.runtime.addressOf(NAMESPACE, m));
    expect(new Set(addresses).size).toBe(3);
    // One leader, and every member sees it.
    const leaders = await Promise.all(MEMBERS.map((m) => metric(m, "etcd_server_is_leader")));
    expect(leaders.filter((l) => l === 1)).toHaveLength(1);
    for (const m of MEMBERS) expect(await metric(m, "etcd_server_has_leader")).toBe(1);
    // The restore below brings back an object made now: the every-minute backup takes a snapshot
    // holding it while the next scenarios run, so the restore need not wait for one.
    await hosted.raw("POST", "/api/v1/namespaces/default/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: KEPT },
      data: { kept: "yes" },
    });
    keptAt = Date.now();
  });

  it("a follower killed: writes go on with two of three, and it comes back with its data", async () => {
    const leaders = await Promise.all(MEMBERS.map((m) => metric(m, "etcd_server_is_leader")));
    const follower = MEMBERS.find((_, i) => leaders[i] === 0) as string;
    const child = meta.runtime.processOf(NAMESPACE, follower);
    expect(child?.pid).toBeDefined();
    child?.kill("SIGKILL");
    const killedAt = Date.now();
    const writer = startWriter(hosted);
    const deadline = Date.now() + 120_000;
    let back = false;
    while (Date.now() < deadline && !back) {
      back = (await readyMembers()).includes(follower) && writer.written() >= 10;
      await sleep(100);
    }
    await writer.stop();
    const written = writer.written();
    const failed = writer.failed().length;
    console.log(
      `e2e hosted etcd: ${follower} killed; ${written} writes went through while it came back, ${failed} failed`,
    );
    expect(back).toBe(true);
    // The one write sent down the API server's connection to the member as it died fails (its etcd
    // client does not retry a write whose stream broke: "connection reset by peer"); every write
    // after the first second goes through the two others.
    const late = writer.failed().filter((f) => f.at - killedAt > 1000 || !/Unavailable/.test(f.error));
    expect(late).toEqual([]);
    expect(writer.failed().length).toBeLessThanOrEqual(1);
    expect(written).toBeGreaterThanOrEqual(10);
    // Back in the cluster: it follows the same leader and holds the writes made while it was away.
    await until(
      "the follower caught up",
      async () => (await metric(follower, "etcd_server_has_leader")) === 1,
    );
    const listed = asList(asMap(await hosted.raw("GET", "/api/v1/namespaces/default/configmaps")).items);
    expect(listed.filter((c) => String(asMap(asMap(c).metadata).name).startsWith("write-"))).toHaveLength(
      written,
    );
  });

  it("a member whose data is gone is replaced — removed, added back, started on a new volume — with writes going on", async () => {
    const leaders = await Promise.all(MEMBERS.map((m) => metric(m, "etcd_server_is_leader")));
    const lost = MEMBERS.filter((_, i) => leaders[i] === 0).pop() as string;
    // The status branch knows every member's ID before the loss (gitfleet recorded them in the host).
    await until("the members' IDs recorded", async () =>
      MEMBERS.every((m) => typeof asMap(asMap(etcdStatus().members)[m]).id === "string"),
    );
    const oldId = String(asMap(asMap(etcdStatus().members)[lost]).id);
    const before = (await configMapsWritten()).length;
    // Its data goes: the process is killed and its volume emptied, as a disk lost under a node.
    const claim = await claimOf(`data-${lost}`);
    const path = await claimDirectory(`data-${lost}`);
    meta.runtime.processOf(NAMESPACE, lost)?.kill("SIGKILL");
    rmSync(join(path, "data"), { recursive: true, force: true });
    const lostAt = Date.now();
    const writer = startWriter(hosted);
    await until(
      `${lost} replaced`,
      async () => {
        const member = asMap(asMap(etcdStatus().members)[lost]);
        return (
          (await readyMembers()).length === 3 &&
          typeof member.id === "string" &&
          member.id !== oldId &&
          etcdStatus().replacing === undefined
        );
      },
      240_000,
    );
    const replacedAt = Date.now();
    await writer.stop();
    console.log(
      `e2e hosted etcd: ${lost} lost its data; replaced and Ready ${((replacedAt - lostAt) / 1000).toFixed(1)} s later (notReadyFor 10s); ${writer.written()} writes meanwhile, ${writer.failed().length} failed`,
    );
    // As above: past the first second after the kill, through removal, addition and the new volume,
    // no write fails.
    expect(writer.failed().filter((f) => f.at - lostAt > 1000 || !/Unavailable/.test(f.error))).toEqual([]);
    expect(writer.failed().length).toBeLessThanOrEqual(1);
    expect(writer.written()).toBeGreaterThan(50);
    // Every write is there, and the new member holds them: it follows the leader and its database has them.
    expect((await configMapsWritten()).length).toBe(before + writer.written());
    expect(await metric(lost, "etcd_server_has_leader")).toBe(1);
    // The new volume: another PersistentVolume under the claim of the same name.
    const claimAfter = await claimOf(`data-${lost}`);
    expect(asMap(claimAfter.spec).volumeName).not.toBe(asMap(claim.spec).volumeName);
    // The replacement's Jobs are gone, and the commits said each step.
    const jobs = asList(
      asMap(await meta.client.raw("GET", `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`)).items,
    );
    expect(
      jobs.filter((j) => asMap(asMap(asMap(j).metadata).labels)["gitfleet.io/etcd-replacement"]),
    ).toEqual([]);
    const log = gitIn(repo.dir, "log", "--format=%B", "gitfleet/status");
    for (const step of [
      `removing ${lost} (member ${oldId})`,
      `adding ${lost} back`,
      `starting ${lost} on a new volume`,
      `${lost} replaced`,
    ])
      expect(log).toContain(step);
  });

  it.each([
    ["a Ready follower", 0, "swap"],
    ["the leader", 1, "swap-leader"],
  ] as const)(
    "a commit asks to replace %s: it is replaced once, with writes going on, and recorded as done",
    async (which, leading, request) => {
      const leaders = await Promise.all(MEMBERS.map((m) => metric(m, "etcd_server_is_leader")));
      const asked = MEMBERS.find((_, i) => leaders[i] === leading) as string;
      const oldId = String(asMap(asMap(etcdStatus().members)[asked]).id);
      const before = (await configMapsWritten()).length;
      const writer = startWriter(hosted);
      const committed = Date.now();
      commitTree(
        repo.dir,
        encode({
          ...files,
          [`controlplanes/${request}.yaml`]: `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdMemberReplacement\nmetadata: { name: ${request} }\nspec: { cluster: ${CLUSTER}, member: ${asked} }\n`,
        }),
        `replace ${asked}`,
      );
      await until(`${asked} replaced as asked`, async () => {
        const status = etcdStatus();
        const member = asMap(asMap(status.members)[asked]);
        return (
          (await readyMembers()).length === 3 &&
          typeof member.id === "string" &&
          member.id !== oldId &&
          asMap(status.requests)[request] === "Done"
        );
      });
      const replacedAt = Date.now();
      await writer.stop();
      console.log(
        `e2e hosted etcd: commit asking to replace ${asked} (${which}) → replaced and Ready ${((replacedAt - committed) / 1000).toFixed(1)} s; ${writer.written()} writes meanwhile, ${writer.failed().length} failed${writer
          .failed()
          .map((f) => `: ${f.error.slice(0, 200)}`)
          .join("")}`,
      );
      // Only the write in flight to the member as it leaves may fail: its connection closes, or
      // leadership passes on under it, or the member stops its raft with the proposal pending
      // ("raft: stopped"). A leader is left twice over — leadership moves off it first, then it is
      // removed — so a write in flight at each of the two may fail. Such a write's outcome is unknown
      // to the client — the other members may have committed it — so it may or may not be stored;
      // every acknowledged write is.
      expect(
        writer.failed().filter((f) => !/Unavailable|leader changed|raft: stopped/.test(f.error)),
      ).toEqual([]);
      expect(writer.failed().length).toBeLessThanOrEqual(1 + leading);
      const stored = (await configMapsWritten()).length - before;
      expect(stored).toBeGreaterThanOrEqual(writer.written());
      expect(stored).toBeLessThanOrEqual(writer.written() + writer.failed().length);
      // Done once: the host records it, and later passes start no other replacement.
      const members = asMap(
        await meta.client.raw("GET", `/api/v1/namespaces/${NAMESPACE}/configmaps/etcd-members`),
      );
      expect(asMap(members.data).replaced).toBe(request);
      const newId = String(asMap(asMap(etcdStatus().members)[asked]).id);
      for (let round = 0; round < 3; round++) await controller.round();
      expect(etcdStatus().replacing).toBeUndefined();
      expect(String(asMap(asMap(etcdStatus().members)[asked]).id)).toBe(newId);
      const log = gitIn(repo.dir, "log", "--format=%B", "gitfleet/status");
      expect(log).toContain(`removing ${asked} (member ${oldId}), as EtcdMemberReplacement ${request} asks`);
      // A leader hands leadership on before it is removed; a follower does not.
      const moved = log.includes(`moving leadership from ${asked} to `);
      expect(moved).toBe(leading === 1);
    },
  );

  it("the scheduled defragmentation runs against every member (etcdctl defrag --cluster)", async () => {
    // Every minute since the members formed; the CronJob keeps its last three that succeeded.
    await until(
      "a defrag Job that succeeded",
      async () => {
        const jobs = asList(
          asMap(
            await meta.client.raw(
              "GET",
              `/apis/batch/v1/namespaces/${NAMESPACE}/jobs?labelSelector=app.kubernetes.io%2Fcomponent%3Detcd-defrag`,
            ),
          ).items,
        ).map((j) => asMap(asMap(j).status));
        return jobs.some((j) => Number(j.succeeded ?? 0) > 0);
      },
      150_000,
    );
    await until("three members Ready after it", async () => (await readyMembers()).length === 3);
  });

  it("a commit restores all three members from one snapshot: an object deleted after it is back, and every member holds it", async () => {
    const path = `/api/v1/namespaces/default/configmaps/${KEPT}`;
    const KEY = `/registry/configmaps/default/${KEPT}`;
    // The backup CronJob (every minute) wrote a snapshot after the object was made (or will).
    let snapshot = "";
    await until(
      "a snapshot taken after the object was made",
      async () => {
        const dir = await claimDirectory("etcd-backup");
        const newest = readdirSync(dir)
          .filter((f) => f.endsWith(".db"))
          .map((f) => join(dir, f))
          .filter((f) => statSync(f).mtimeMs > keptAt + 1000)
          .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
        // Whole (etcdctl writes <name>.db.part and renames it) and holding the object's key.
        snapshot = newest && readFileSync(newest).includes(Buffer.from(KEY)) ? newest : "";
        return snapshot !== "";
      },
      150_000,
    );
    await hosted.raw("DELETE", path);
    const committed = Date.now();
    commitTree(
      repo.dir,
      encode({
        ...files,
        "controlplanes/r1.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata: { name: r1 }\nspec: { cluster: ${CLUSTER}, snapshot: ${snapshot.split("/").pop()} }\n`,
      }),
      "restore pc-ha's etcd",
    );
    const phases = await restorePhases(repo.dir, "r1", until);
    console.log(
      `e2e hosted etcd: restore commit → all three members back on the snapshot's data ${((Date.now() - committed) / 1000).toFixed(1)} s (phases: ${phases.join(" → ")})`,
    );
    expect(phases.at(-1)).toBe("Succeeded");
    expect(phases).toContain("Restoring");
    const client = (await hostedClient(meta.client, CLUSTER)) as MemberClient;
    expect(asMap(asMap(await client.raw("GET", path)).data).kept).toBe("yes");
    // Each member started from the directory its own Job restored into its own volume (the Jobs are
    // pruned once the restore moved past Restoring).
    const etcd = await meta.client.get({
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      namespace: NAMESPACE,
      name: "etcd",
    });
    expect(JSON.stringify(asMap(etcd?.spec).template)).toContain("--data-dir=/var/lib/etcd/restore-r1");
    await until("three members Ready on the restored data", async () => (await readyMembers()).length === 3);
    for (const member of MEMBERS) {
      expect(readdirSync(await claimDirectory(`data-${member}`))).toContain("restore-r1");
      expect(await metric(member, "etcd_server_has_leader")).toBe(1);
    }
  });
  it("a database that reaches its quota (NOSPACE) is compacted, defragmented and disarmed: writes are taken again", async () => {
    // The scheduled defragmentation (every minute) is suspended first: one that ran between the
    // clearing's compaction and its next step would leave gitfleet nothing to defragment, and the
    // clearing would go straight to the disarm (as it should, but this test follows every step).
    files = {
      ...files,
      "controlplanes/ha.yaml": (files["controlplanes/ha.yaml"] as string).replace(
        'defrag: { schedule: "* * * * *" }',
        'defrag: { schedule: "* * * * *", suspend: true }',
      ),
    };
    commitTree(repo.dir, encode(files), "suspend pc-ha's scheduled defragmentation");
    const defrags = async (kind: "cronjobs" | "jobs") =>
      asList(
        asMap(
          await meta.client.raw(
            "GET",
            `/apis/batch/v1/namespaces/${NAMESPACE}/${kind}?labelSelector=app.kubernetes.io%2Fcomponent%3Detcd-defrag`,
          ),
        ).items,
      ).map((o) => asMap(o));
    await until("the scheduled defragmentation suspended, none running", async () => {
      const [cronJobs, jobs] = [await defrags("cronjobs"), await defrags("jobs")];
      return (
        cronJobs.length === 1 &&
        asMap(cronJobs[0]?.spec).suspend === true &&
        jobs.every((j) =>
          asList(asMap(j.status).conditions).some(
            (c) => ["Complete", "Failed"].includes(String(asMap(c).type)) && asMap(c).status === "True",
          ),
        )
      );
    });
    // ~700 KiB each against a quota of 32Mi: refused within a few dozen writes.
    const { made, refused } = await fillEtcd(hosted);
    expect(refused).toMatch(/database space exceeded/);
    const fullAt = Date.now();
    // Deletes are taken under NOSPACE: the data goes, its space is freed once compacted.
    await emptyEtcd(hosted, made);
    const write = (name: string) => writeSmall(hosted, name);
    await expect(write("while-full")).rejects.toThrow(/database space exceeded/);
    let attempt = 0;
    await until("writes taken again", async () => {
      await write(`after-${attempt++}`);
      return true;
    });
    console.log(
      `e2e hosted etcd: ${made} writes of 700 KiB filled the 32Mi quota; NOSPACE cleared by gitfleet (compact, defragment, disarm) ${((Date.now() - fullAt) / 1000).toFixed(1)} s after the data was deleted`,
    );
    await until("the alarm gone from every member's record", async () =>
      Object.values(asMap(etcdStatus().members)).every(
        (m) => asMap(m).alarm === undefined && asMap(m).ready === true,
      ),
    );
    const log = gitIn(repo.dir, "log", "--format=%B", "gitfleet/status");
    for (const step of [
      "compacting the history up to revision",
      "defragmenting every member to clear NOSPACE",
      "disarming NOSPACE",
      "NOSPACE cleared",
    ])
      expect(log).toContain(step);
  });

  it("a shared etcd of three members holds two hosted clusters, each under its own prefix; a member whose data is gone is replaced with writes to both going on", async () => {
    const committed = Date.now();
    files = { ...files, ...sharedFiles(network) };
    commitTree(
      repo.dir,
      encode(files),
      "two hosted clusters keep their data in one shared etcd of three members",
    );
    const clients = new Map<string, MemberClient>();
    await until(
      "both API servers Ready and the shared etcd's three members Ready",
      async () => {
        for (const cluster of SHARED_CLUSTERS) {
          if (clients.has(cluster)) continue;
          const client = await hostedClient(meta.client, cluster);
          if ((await client?.probe())?.outcome === "ready") clients.set(cluster, client as MemberClient);
        }
        return clients.size === SHARED_CLUSTERS.length && (await readyMembers(SHARED_NAMESPACE)).length === 3;
      },
      300_000,
    );
    console.log(
      `e2e hosted etcd: shared etcd: commit → both API servers Ready and three members Ready ${((Date.now() - committed) / 1000).toFixed(1)} s`,
    );
    const [a, b] = SHARED_CLUSTERS.map((c) => clients.get(c) as MemberClient) as [MemberClient, MemberClient];
    // One etcd, two clusters: what one makes, the other does not see.
    await writeSmall(a, "only-in-pe-a");
    const seenInB = await b
      .raw("GET", "/api/v1/namespaces/default/configmaps/only-in-pe-a")
      .catch(() => undefined);
    expect(seenInB).toBeUndefined();
    // The members as the status of each cluster in it records them: the same etcd.
    await until("the shared members' IDs recorded for both clusters", async () =>
      SHARED_CLUSTERS.every((c) =>
        SHARED_MEMBERS.every((m) => typeof asMap(asMap(etcdStatus(c).members)[m]).id === "string"),
      ),
    );
    expect(etcdStatus("pe-a").name).toBe(`${SHARED_NAMESPACE}/shared`);
    expect(etcdStatus("pe-b").members).toEqual(etcdStatus("pe-a").members);

    const leaders = await Promise.all(
      SHARED_MEMBERS.map((m) => metric(m, "etcd_server_is_leader", SHARED_NAMESPACE)),
    );
    expect(leaders.filter((l) => l === 1)).toHaveLength(1);
    const lost = SHARED_MEMBERS.filter((_, i) => leaders[i] === 0).pop() as string;
    const oldId = String(asMap(asMap(etcdStatus("pe-a").members)[lost]).id);
    const before = await Promise.all([a, b].map(async (c) => (await configMapsWritten(c)).length));
    const claim = await claimOf(`data-${lost}`, SHARED_NAMESPACE);
    const path = await claimDirectory(`data-${lost}`, SHARED_NAMESPACE);
    meta.runtime.processOf(SHARED_NAMESPACE, lost)?.kill("SIGKILL");
    rmSync(join(path, "data"), { recursive: true, force: true });
    const lostAt = Date.now();
    const writers = [a, b].map((c) => startWriter(c));
    await until(
      `${lost} of the shared etcd replaced`,
      async () => {
        const member = asMap(asMap(etcdStatus("pe-a").members)[lost]);
        return (
          (await readyMembers(SHARED_NAMESPACE)).length === 3 &&
          typeof member.id === "string" &&
          member.id !== oldId &&
          etcdStatus("pe-a").replacing === undefined
        );
      },
      240_000,
    );
    const replacedAt = Date.now();
    for (const writer of writers) await writer.stop();
    console.log(
      `e2e hosted etcd: shared etcd: ${lost} lost its data; replaced and Ready ${((replacedAt - lostAt) / 1000).toFixed(1)} s later; ${writers.map((w) => `${w.written()} writes (${w.failed().length} failed)`).join(" and ")} to pe-a and pe-b meanwhile`,
    );
    for (const [i, writer] of writers.entries()) {
      // Past the first second after the kill, no write to either cluster fails.
      expect(writer.failed().filter((f) => f.at - lostAt > 1000 || !/Unavailable/.test(f.error))).toEqual([]);
      expect(writer.failed().length).toBeLessThanOrEqual(1);
      expect(writer.written()).toBeGreaterThan(20);
      expect((await configMapsWritten([a, b][i])).length).toBe((before[i] as number) + writer.written());
    }
    expect(await metric(lost, "etcd_server_has_leader", SHARED_NAMESPACE)).toBe(1);
    const claimAfter = await claimOf(`data-${lost}`, SHARED_NAMESPACE);
    expect(asMap(claimAfter.spec).volumeName).not.toBe(asMap(claim.spec).volumeName);
    const log = gitIn(repo.dir, "log", "--format=%B", "gitfleet/status");
    for (const step of [`removing ${lost} (member ${oldId})`, `adding ${lost} back`, `${lost} replaced`])
      expect(log).toContain(step);
  });
});

// The ConfigMaps the writers made in a hosted cluster.
async function configMapsWritten(client = hosted): Promise<unknown[]> {
  const listed = asList(asMap(await client.raw("GET", "/api/v1/namespaces/default/configmaps")).items);
  return listed.filter((c) => String(asMap(asMap(c).metadata).name).startsWith("write-"));
}

async function claimOf(name: string, namespace = NAMESPACE): Promise<JsonMap> {
  return asMap(
    await meta.client.raw("GET", `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${name}`),
  );
}

// The directory the process runtime's provisioner gave a claim of an etcd's namespace.
async function claimDirectory(name: string, namespace = NAMESPACE): Promise<string> {
  const claim = await claimOf(name, namespace);
  const volume = asMap(
    await meta.client.raw("GET", `/api/v1/persistentvolumes/${String(asMap(claim.spec).volumeName)}`),
  );
  return String(asMap(asMap(volume.spec).hostPath).path);
}
