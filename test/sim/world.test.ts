import * as k8s from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { clientConfig, until } from "../helpers/member.js";

/** The world inside a member — nodes, a Deployment's ReplicaSet and pods, scheduling, readiness — seen through client-node. */
let member: SimulatedMember | undefined;
afterEach(async () => member?.close());

async function clients(options: Parameters<typeof startMember>[0]) {
  member = await startMember(options);
  const config = clientConfig(member);
  return { core: config.makeApiClient(k8s.CoreV1Api), apps: config.makeApiClient(k8s.AppsV1Api) };
}

const deployment = (replicas: number, cpu: string): k8s.V1Deployment => ({
  metadata: { name: "web", namespace: "default" },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        containers: [
          { name: "main", image: "registry.example.com/web:1.0.0", resources: { requests: { cpu } } },
        ],
      },
    },
  },
});

describe("the world inside a simulated member", () => {
  it("runs a Deployment's pods on nodes until it is fully available, and follows scaling down", async () => {
    const { core, apps } = await clients({ name: "east", world: { readyDelayMs: 10 } });
    expect((await core.listNode()).items.map((n) => n.status?.allocatable?.cpu)).toEqual(["4", "4", "4"]);
    await apps.createNamespacedDeployment({ namespace: "default", body: deployment(4, "500m") });
    const available = await until(async () => {
      const d = await apps.readNamespacedDeployment({ name: "web", namespace: "default" });
      return d.status?.availableReplicas === 4 ? d : undefined;
    });
    expect(available.status).toMatchObject({
      replicas: 4,
      readyReplicas: 4,
      updatedReplicas: 4,
      observedGeneration: 1,
    });
    expect(available.status?.conditions?.[0]).toMatchObject({ type: "Available", status: "True" });
    const pods = (await core.listNamespacedPod({ namespace: "default", labelSelector: "app=web" })).items;
    expect(pods).toHaveLength(4);
    expect(
      pods.every((p) => p.status?.phase === "Running" && p.spec?.nodeName?.startsWith("east-node-")),
    ).toBe(true);
    await apps.patchNamespacedDeploymentScale(
      { name: "web", namespace: "default", body: { spec: { replicas: 1 } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await until(async () =>
      (await core.listNamespacedPod({ namespace: "default" })).items.length === 1 ? true : undefined,
    );
    const scaled = await until(async () => {
      const d = await apps.readNamespacedDeployment({ name: "web", namespace: "default" });
      return d.status?.replicas === 1 ? d : undefined;
    });
    expect(scaled.status).toMatchObject({ readyReplicas: 1, availableReplicas: 1 });
    // Converged: the controllers write nothing more. (A fixed wait: many controller passes, 10 ms
    // each, and no write — a check that nothing happens, which no condition can poll for.)
    const version = member?.api.store.currentVersion();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(member?.api.store.currentVersion()).toBe(version);
  });

  it("times a rollout out whose image cannot be pulled, keeps the old pods, and completes once it can", async () => {
    const { core, apps } = await clients({ name: "registry", world: { readyDelayMs: 10 } });
    await apps.createNamespacedDeployment({
      namespace: "default",
      body: {
        ...deployment(2, "100m"),
        spec: { ...deployment(2, "100m").spec, progressDeadlineSeconds: 1 },
      } as k8s.V1Deployment,
    });
    const progressing = (d: k8s.V1Deployment) => d.status?.conditions?.find((c) => c.type === "Progressing");
    await until(async () => {
      const d = await apps.readNamespacedDeployment({ name: "web", namespace: "default" });
      return progressing(d)?.reason === "NewReplicaSetAvailable" ? d : undefined;
    });
    const before = (await core.listNamespacedPod({ namespace: "default" })).items.map((p) => p.metadata?.uid);
    member?.faults.unpullableImages(["registry.example.com/web:2.0.0"]);
    await apps.patchNamespacedDeployment(
      {
        name: "web",
        namespace: "default",
        body: {
          spec: {
            template: { spec: { containers: [{ name: "main", image: "registry.example.com/web:2.0.0" }] } },
          },
        },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
    );
    const timedOut = await until(async () => {
      const d = await apps.readNamespacedDeployment({ name: "web", namespace: "default" });
      return progressing(d)?.reason === "ProgressDeadlineExceeded" ? d : undefined;
    }, 5_000);
    expect(progressing(timedOut)).toMatchObject({ status: "False" });
    const pods = (await core.listNamespacedPod({ namespace: "default" })).items;
    const waiting = pods.filter((p) => p.status?.phase === "Pending");
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting[0]?.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe("ImagePullBackOff");
    // maxUnavailable 25% of 2 rounds down to 0: both old pods keep running.
    expect(pods.filter((p) => before.includes(p.metadata?.uid)).map((p) => p.status?.phase)).toEqual([
      "Running",
      "Running",
    ]);
    member?.faults.unpullableImages([]);
    const done = await until(async () => {
      const d = await apps.readNamespacedDeployment({ name: "web", namespace: "default" });
      return progressing(d)?.reason === "NewReplicaSetAvailable" ? d : undefined;
    }, 5_000);
    expect(done.status).toMatchObject({ updatedReplicas: 2, availableReplicas: 2 });
  });

  it("leaves pods that fit on no node Pending and Unschedulable, and the Deployment short of available", async () => {
    const { core, apps } = await clients({
      name: "small",
      world: {
        readyDelayMs: 10,
        nodePools: [{ count: 2, allocatable: { cpu: "1", memory: "4Gi", pods: "110" } }],
      },
    });
    await apps.createNamespacedDeployment({ namespace: "default", body: deployment(5, "500m") });
    const pods = await until(async () => {
      const list = (await core.listNamespacedPod({ namespace: "default" })).items;
      return list.length === 5 && list.filter((p) => p.status?.phase === "Running").length === 4
        ? list
        : undefined;
    });
    const pending = pods.filter((p) => p.status?.phase === "Pending");
    expect(pending).toHaveLength(1);
    expect(pending[0]?.status?.conditions?.[0]).toMatchObject({
      type: "PodScheduled",
      status: "False",
      reason: "Unschedulable",
    });
    const d = await until(async () => {
      const read = await apps.readNamespacedDeployment({ name: "web", namespace: "default" });
      return read.status?.availableReplicas === 4 ? read : undefined;
    });
    expect(d.status).toMatchObject({ replicas: 5, unavailableReplicas: 1 });
    expect(d.status?.conditions?.[0]).toMatchObject({ type: "Available", status: "False" });
  });

  it("names a StatefulSet's pods by ordinal and scales down from the highest, and runs a Job to completion", async () => {
    member = await startMember({ name: "west", world: { readyDelayMs: 10 } });
    const config = clientConfig(member);
    const core = config.makeApiClient(k8s.CoreV1Api);
    const apps = config.makeApiClient(k8s.AppsV1Api);
    const batch = config.makeApiClient(k8s.BatchV1Api);
    const template = {
      metadata: { labels: { app: "db" } },
      spec: { containers: [{ name: "db", image: "registry.example.com/db:8" }] },
    };
    await apps.createNamespacedStatefulSet({
      namespace: "default",
      body: {
        metadata: { name: "db" },
        spec: { replicas: 3, serviceName: "db", selector: { matchLabels: { app: "db" } }, template },
      },
    });
    await until(async () => {
      const s = await apps.readNamespacedStatefulSet({ name: "db", namespace: "default" });
      return s.status?.readyReplicas === 3 ? s : undefined;
    });
    const names = async () =>
      (await core.listNamespacedPod({ namespace: "default", labelSelector: "app=db" })).items.map(
        (p) => p.metadata?.name,
      );
    expect(await names()).toEqual(["db-0", "db-1", "db-2"]);
    await apps.patchNamespacedStatefulSet(
      { name: "db", namespace: "default", body: { spec: { replicas: 1 } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await until(async () => ((await names()).length === 1 ? true : undefined));
    expect(await names()).toEqual(["db-0"]);
    // spec.ordinals.start moves the range: the pods outside it go, the range's own come.
    await apps.patchNamespacedStatefulSet(
      { name: "db", namespace: "default", body: { spec: { replicas: 2, ordinals: { start: 5 } } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await until(async () =>
      JSON.stringify(await names()) === JSON.stringify(["db-5", "db-6"]) ? true : undefined,
    );
    await apps.patchNamespacedStatefulSet(
      { name: "db", namespace: "default", body: { spec: { replicas: 3 } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await until(async () => ((await names()).includes("db-7") ? true : undefined));
    expect(await names()).toEqual(["db-5", "db-6", "db-7"]);

    await batch.createNamespacedJob({
      namespace: "default",
      body: {
        metadata: { name: "train" },
        spec: {
          completions: 3,
          parallelism: 2,
          template: {
            spec: {
              restartPolicy: "Never",
              containers: [{ name: "t", image: "registry.example.com/train:1" }],
            },
          },
        },
      },
    });
    const job = await until(async () => {
      const j = await batch.readNamespacedJob({ name: "train", namespace: "default" });
      return j.status?.succeeded === 3 ? j : undefined;
    });
    expect(job.status?.conditions?.[0]).toMatchObject({ type: "Complete", status: "True" });
    // No pod active: 0, which a real server (as the simulated one) leaves out of the status.
    expect(job.status?.active ?? 0).toBe(0);
  });

  it("loses nodes on demand: their pods are evicted and what no longer fits waits Unschedulable until they return", async () => {
    const { core, apps } = await clients({
      name: "lossy",
      world: {
        readyDelayMs: 10,
        nodePools: [{ count: 3, allocatable: { cpu: "1", memory: "4Gi", pods: "110" } }],
      },
    });
    await apps.createNamespacedDeployment({ namespace: "default", body: deployment(4, "500m") });
    const phases = async () =>
      (await core.listNamespacedPod({ namespace: "default" })).items.map((p) => p.status?.phase).sort();
    await until(async () =>
      (await phases()).join() === "Running,Running,Running,Running" ? true : undefined,
    );
    const lost = member?.faults.loseNodes(2) ?? [];
    expect(lost).toEqual(["lossy-node-1", "lossy-node-2"]);
    const node = await core.readNode({ name: "lossy-node-2" });
    expect(node.spec?.taints).toEqual([{ key: "node.kubernetes.io/unreachable", effect: "NoExecute" }]);
    await until(async () =>
      (await phases()).join() === "Pending,Pending,Running,Running" ? true : undefined,
    );
    const running = (await core.listNamespacedPod({ namespace: "default" })).items.filter(
      (p) => p.status?.phase === "Running",
    );
    expect(running.every((p) => p.spec?.nodeName === "lossy-node-0")).toBe(true);
    member?.faults.restoreNodes();
    await until(async () =>
      (await phases()).join() === "Running,Running,Running,Running" ? true : undefined,
    );
  });

  it("runs the pods of a custom workload declared to it, such as an OpenKruise CloneSet", async () => {
    member = await startMember({
      name: "games",
      world: {
        readyDelayMs: 10,
        workloads: [
          {
            group: "apps.kruise.io",
            kind: "CloneSet",
            replicasPath: "spec.replicas",
            podTemplatePath: "spec.template",
          },
        ],
      },
    });
    const config = clientConfig(member);
    await config.makeApiClient(k8s.ApiextensionsV1Api).createCustomResourceDefinition({
      body: {
        metadata: { name: "clonesets.apps.kruise.io" },
        spec: {
          group: "apps.kruise.io",
          scope: "Namespaced",
          names: { kind: "CloneSet", plural: "clonesets", singular: "cloneset" },
          versions: [
            {
              name: "v1alpha1",
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: { openAPIV3Schema: { type: "object", x_kubernetes_preserve_unknown_fields: true } },
            },
          ],
        },
      },
    });
    const custom = config.makeApiClient(k8s.CustomObjectsApi);
    const ref = { group: "apps.kruise.io", version: "v1alpha1", namespace: "default", plural: "clonesets" };
    await custom.createNamespacedCustomObject({
      ...ref,
      body: {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "CloneSet",
        metadata: { name: "arena" },
        spec: {
          replicas: 3,
          template: {
            metadata: { labels: { app: "arena" } },
            spec: { containers: [{ name: "game", image: "registry.example.com/arena:1" }] },
          },
        },
      },
    });
    const ready = await until(async () => {
      const object = (await custom.getNamespacedCustomObject({ ...ref, name: "arena" })) as {
        status?: { readyReplicas?: number };
      };
      return object.status?.readyReplicas === 3 ? object : undefined;
    });
    expect(ready.status).toMatchObject({ replicas: 3, readyReplicas: 3, updatedReadyReplicas: 3 });
    const pods = (
      await config
        .makeApiClient(k8s.CoreV1Api)
        .listNamespacedPod({ namespace: "default", labelSelector: "app=arena" })
    ).items;
    expect(pods.map((p) => p.metadata?.ownerReferences?.[0]?.kind)).toEqual([
      "CloneSet",
      "CloneSet",
      "CloneSet",
    ]);
  });

  it("binds every PersistentVolumeClaim to a volume of the size it asks, as a default StorageClass does", async () => {
    const { core } = await clients({ name: "east", world: { readyDelayMs: 10 } });
    await core.createNamespacedPersistentVolumeClaim({
      namespace: "default",
      body: {
        metadata: { name: "data" },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "5Gi" } } },
      },
    });
    const bound = await until(async () => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ name: "data", namespace: "default" });
      return claim.status?.phase === "Bound" ? claim : undefined;
    });
    expect(bound.status).toMatchObject({ accessModes: ["ReadWriteOnce"], capacity: { storage: "5Gi" } });
  });

  it("gives a LoadBalancer Service an address and leaves a ClusterIP one alone", async () => {
    const { core } = await clients({ name: "east", world: { readyDelayMs: 10 } });
    for (const [name, type] of [
      ["public", "LoadBalancer"],
      ["internal", "ClusterIP"],
    ] as const)
      await core.createNamespacedService({
        namespace: "default",
        body: { metadata: { name }, spec: { type, ports: [{ port: 80 }], selector: { app: name } } },
      });
    const address = await until(async () => {
      const service = await core.readNamespacedService({ name: "public", namespace: "default" });
      return service.status?.loadBalancer?.ingress?.[0]?.ip;
    });
    expect(address).toMatch(/^198\.51\.\d+\.\d+$/);
    const internal = await core.readNamespacedService({ name: "internal", namespace: "default" });
    expect(internal.status?.loadBalancer?.ingress ?? []).toEqual([]);
  });

  it("counts what a namespace's pods use in each ResourceQuota's status, as the quota controller does", async () => {
    const { core, apps } = await clients({ name: "east", world: { readyDelayMs: 10 } });
    await core.createNamespacedResourceQuota({
      namespace: "default",
      body: {
        metadata: { name: "shop" },
        spec: { hard: { "requests.cpu": "4", pods: "10", "limits.memory": "1Gi" } },
      },
    });
    // Admission counts against the quota once the quota controller counted it first, as a real API
    // server's does; from then on a pod must say what the quota limits (limits.memory here).
    const first = await until(async () => {
      const quota = await core.readNamespacedResourceQuota({ name: "shop", namespace: "default" });
      return quota.status?.hard ? quota.status : undefined;
    });
    expect(first.used).toEqual({ "limits.memory": "0", pods: "0", "requests.cpu": "0" });
    const web = deployment(3, "500m");
    const main = web.spec?.template.spec?.containers[0] as k8s.V1Container;
    main.resources = { ...main.resources, limits: { memory: "128Mi" } };
    await apps.createNamespacedDeployment({ namespace: "default", body: web });
    // Three controllers in a row (Deployment, ReplicaSet, quota) on a loaded CI machine: room to poll.
    const counted = await until(async () => {
      const quota = await core.readNamespacedResourceQuota({ name: "shop", namespace: "default" });
      return quota.status?.used?.pods === "3" ? quota.status : undefined;
    }, 30_000);
    expect(counted).toEqual({
      hard: { "limits.memory": "1Gi", pods: "10", "requests.cpu": "4" },
      used: { "limits.memory": "384Mi", pods: "3", "requests.cpu": "1500m" },
    });
    await apps.patchNamespacedDeploymentScale(
      { name: "web", namespace: "default", body: { spec: { replicas: 1 } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    const scaled = await until(async () => {
      const quota = await core.readNamespacedResourceQuota({ name: "shop", namespace: "default" });
      return quota.status?.used?.pods === "1" ? quota.status.used : undefined;
    }, 30_000);
    expect(scaled).toEqual({ "limits.memory": "128Mi", pods: "1", "requests.cpu": "500m" });
  });

  it("refuses pods a counted ResourceQuota forbids, with the API server's words, and counts those it admits", async () => {
    const { core } = await clients({ name: "east", world: { readyDelayMs: 10 } });
    await core.createNamespacedResourceQuota({
      namespace: "default",
      body: { metadata: { name: "small" }, spec: { hard: { "requests.cpu": "250m", pods: "10" } } },
    });
    // Admission waits for the quota controller's first count, as a real API server's does.
    await until(async () => {
      const quota = await core.readNamespacedResourceQuota({ name: "small", namespace: "default" });
      return quota.status?.hard ? true : undefined;
    });
    const pod = (name: string, cpu?: string): k8s.V1Pod => ({
      metadata: { name },
      spec: {
        containers: [
          {
            name: "main",
            image: "registry.example.com/x:1",
            ...(cpu ? { resources: { requests: { cpu } } } : {}),
          },
        ],
      },
    });
    const create = (body: k8s.V1Pod) =>
      core.createNamespacedPod({ namespace: "default", body }).then(
        () => "created",
        (error: { body?: string }) => String(error.body ?? error),
      );
    expect(await create(pod("bare"))).toContain(
      'pods \\"bare\\" is forbidden: failed quota: small: must specify requests.cpu for: main',
    );
    expect(await create(pod("a", "100m"))).toBe("created");
    expect(await create(pod("b", "100m"))).toBe("created");
    // At the limit exactly is admitted; one milli-core past it is not.
    expect(await create(pod("c", "50m"))).toBe("created");
    expect(await create(pod("d", "1m"))).toContain(
      "exceeded quota: small, requested: requests.cpu=1m, used: requests.cpu=250m, limited: requests.cpu=250m",
    );
  });

  it("rolls a new template out without dropping below desired − maxUnavailable, and keeps pods when the template is unchanged", async () => {
    const { core, apps } = await clients({ name: "rolling", world: { readyDelayMs: 30 } });
    await apps.createNamespacedDeployment({ namespace: "default", body: deployment(4, "100m") });
    await until(async () =>
      (await apps.readNamespacedDeployment({ name: "web", namespace: "default" })).status
        ?.availableReplicas === 4
        ? true
        : undefined,
    );
    const uids = async () =>
      (await core.listNamespacedPod({ namespace: "default" })).items.map((p) => p.metadata?.uid).sort();
    const before = await uids();
    // The same spec again: nothing to roll out, the pods stay.
    await apps.replaceNamespacedDeployment({
      name: "web",
      namespace: "default",
      body: { ...deployment(4, "100m"), metadata: { name: "web", namespace: "default" } },
    });
    // A fixed wait: the controllers get many passes, and no pod may change.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await uids()).toEqual(before);
    const next = deployment(4, "100m");
    (next.spec?.template.spec?.containers[0] as k8s.V1Container).image = "registry.example.com/web:2.0.0";
    await apps.replaceNamespacedDeployment({ name: "web", namespace: "default", body: next });
    let lowest = 4;
    await until(async () => {
      const d = await apps.readNamespacedDeployment({ name: "web", namespace: "default" });
      lowest = Math.min(lowest, d.status?.availableReplicas ?? 0);
      const pods = (await core.listNamespacedPod({ namespace: "default" })).items;
      const done =
        pods.length === 4 &&
        pods.every(
          (p) =>
            p.spec?.containers[0]?.image === "registry.example.com/web:2.0.0" &&
            p.status?.phase === "Running",
        );
      return done && d.status?.updatedReplicas === 4 && d.status.availableReplicas === 4 ? true : undefined;
    });
    expect(lowest).toBeGreaterThanOrEqual(3);
    // The old ReplicaSet stays, scaled to zero, as the rollout's history (revision 1; the new one is 2).
    const history = async () =>
      (await apps.listNamespacedReplicaSet({ namespace: "default" })).items
        .map((rs) => [rs.metadata?.annotations?.["deployment.kubernetes.io/revision"], rs.spec?.replicas])
        .sort();
    await until(async () =>
      JSON.stringify(await history()) ===
      JSON.stringify([
        ["1", 0],
        ["2", 4],
      ])
        ? true
        : undefined,
    );
    expect(
      (await apps.readNamespacedDeployment({ name: "web", namespace: "default" })).metadata?.annotations,
    ).toMatchObject({
      "deployment.kubernetes.io/revision": "2",
    });
    expect((await uids()).some((uid) => before.includes(uid))).toBe(false);
    // No history kept: the old ReplicaSet goes.
    await apps.patchNamespacedDeployment(
      { name: "web", namespace: "default", body: { spec: { revisionHistoryLimit: 0 } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await until(async () =>
      JSON.stringify(await history()) === JSON.stringify([["2", 4]]) ? true : undefined,
    );
  });
});
