import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { clientConfig } from "../helpers/member.js";

/** A simulated member driven only through HTTP by @kubernetes/client-node, as gitfleet's sync will drive it. */
let member: SimulatedMember;
let config: k8s.KubeConfig;

beforeAll(async () => {
  member = await startMember({ name: "east" });
  config = clientConfig(member);
});
afterAll(() => member.close());

const core = () => config.makeApiClient(k8s.CoreV1Api);
const apps = () => config.makeApiClient(k8s.AppsV1Api);

// The Status a failed call returned.
async function failure(call: Promise<unknown>): Promise<{ code: number; reason: string; message: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof k8s.ApiException) {
      const body = JSON.parse(String(error.body)) as { reason: string; message: string };
      return { code: error.code, reason: body.reason, message: body.message };
    }
    throw error;
  }
  throw new Error("the call succeeded");
}

const deployment = (name: string, replicas: number): k8s.V1Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels: { app: name, tier: "web" } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "main", image: `registry.example.com/${name}:1.0.0` }] },
    },
  },
});

describe("a simulated member through @kubernetes/client-node", () => {
  it("creates, reads, lists by label and field, updates and deletes with Kubernetes semantics", async () => {
    await core().createNamespace({ body: { metadata: { name: "shop" } } });
    const created = await core().createNamespacedConfigMap({
      namespace: "shop",
      body: { metadata: { name: "web", labels: { app: "web" } }, data: { LEVEL: "info" } },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    await core().createNamespacedConfigMap({
      namespace: "shop",
      body: { metadata: { name: "api", labels: { app: "api" } } },
    });
    const byLabel = await core().listNamespacedConfigMap({
      namespace: "shop",
      labelSelector: "app in (web,cart)",
    });
    expect(byLabel.items.map((c) => c.metadata?.name)).toEqual(["web"]);
    const byField = await core().listConfigMapForAllNamespaces({ fieldSelector: "metadata.name=api" });
    expect(byField.items.map((c) => `${c.metadata?.namespace}/${c.metadata?.name}`)).toEqual(["shop/api"]);
    const read = await core().readNamespacedConfigMap({ name: "web", namespace: "shop" });
    const updated = await core().replaceNamespacedConfigMap({
      name: "web",
      namespace: "shop",
      body: { ...read, data: { LEVEL: "debug" } },
    });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(read.metadata?.resourceVersion));
    // A write from a stale read loses.
    expect(
      await failure(
        core().replaceNamespacedConfigMap({
          name: "web",
          namespace: "shop",
          body: { ...read, data: { LEVEL: "warn" } },
        }),
      ),
    ).toMatchObject({ code: 409, reason: "Conflict" });
    await core().deleteNamespacedConfigMap({ name: "web", namespace: "shop" });
    expect(await failure(core().readNamespacedConfigMap({ name: "web", namespace: "shop" }))).toEqual({
      code: 404,
      reason: "NotFound",
      message: 'configmaps "web" not found',
    });
  });

  it("answers like a real server for a missing namespace, a duplicate and a bad selector", async () => {
    expect(
      await failure(
        core().createNamespacedConfigMap({ namespace: "nowhere", body: { metadata: { name: "x" } } }),
      ),
    ).toEqual({
      code: 404,
      reason: "NotFound",
      message: 'namespaces "nowhere" not found',
    });
    await core().createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "dup" } } });
    expect(
      await failure(
        core().createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "dup" } } }),
      ),
    ).toMatchObject({
      code: 409,
      reason: "AlreadyExists",
    });
    expect(
      await failure(core().listNamespacedConfigMap({ namespace: "default", fieldSelector: "spec.x=1" })),
    ).toMatchObject({
      code: 400,
      message: "field label not supported: spec.x",
    });
  });

  it("bumps generation on spec changes only, and patches by strategic merge, merge and JSON patch", async () => {
    const created = await apps().createNamespacedDeployment({
      namespace: "default",
      body: deployment("web", 3),
    });
    expect(created.metadata?.generation).toBe(1);
    const strategic = await apps().patchNamespacedDeployment(
      {
        name: "web",
        namespace: "default",
        body: {
          spec: {
            template: { spec: { containers: [{ name: "main", image: "registry.example.com/web:1.1.0" }] } },
          },
        },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
    );
    // The container list merged by name: the one container changed its image, nothing was replaced.
    // (With the fields the server defaults, as a real API server returns them.)
    expect(
      strategic.spec?.template.spec?.containers.map((c) => [c.name, c.image, c.imagePullPolicy]),
    ).toEqual([["main", "registry.example.com/web:1.1.0", "IfNotPresent"]]);
    expect(strategic.metadata?.generation).toBe(2);
    const labelled = await apps().patchNamespacedDeployment(
      { name: "web", namespace: "default", body: { metadata: { labels: { tier: null, owner: "shop" } } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    expect(labelled.metadata?.labels).toEqual({ app: "web", owner: "shop" });
    expect(labelled.metadata?.generation).toBe(2);
    const jsonPatched = await apps().patchNamespacedDeployment(
      { name: "web", namespace: "default", body: [{ op: "replace", path: "/spec/replicas", value: 5 }] },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.JsonPatch),
    );
    expect(jsonPatched.spec?.replicas).toBe(5);
    const scale = await apps().readNamespacedDeploymentScale({ name: "web", namespace: "default" });
    expect(scale.spec?.replicas).toBe(5);
    await apps().replaceNamespacedDeploymentScale({
      name: "web",
      namespace: "default",
      body: { ...scale, spec: { replicas: 2 } },
    });
    expect(
      (await apps().readNamespacedDeployment({ name: "web", namespace: "default" })).spec?.replicas,
    ).toBe(2);
  });

  it("holds a deletion while finalizers remain, and serves a CRD's kind with unknown fields kept", async () => {
    await core().createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "held", finalizers: ["example.com/keep"] } },
    });
    await core().deleteNamespacedConfigMap({ name: "held", namespace: "default" });
    const held = await core().readNamespacedConfigMap({ name: "held", namespace: "default" });
    expect(held.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await core().patchNamespacedConfigMap(
      { name: "held", namespace: "default", body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    expect((await failure(core().readNamespacedConfigMap({ name: "held", namespace: "default" }))).code).toBe(
      404,
    );

    const extensions = config.makeApiClient(k8s.ApiextensionsV1Api);
    const crd = await extensions.createCustomResourceDefinition({
      body: {
        metadata: { name: "clonesets.apps.kruise.io" },
        spec: {
          group: "apps.kruise.io",
          scope: "Namespaced",
          names: { kind: "CloneSet", plural: "clonesets", singular: "cloneset", shortNames: ["clone"] },
          versions: [
            {
              name: "v1alpha1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", x_kubernetes_preserve_unknown_fields: true } },
            },
          ],
        },
      },
    });
    expect(crd.status?.conditions?.find((c) => c.type === "Established")?.status).toBe("True");
    const custom = config.makeApiClient(k8s.CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: "apps.kruise.io",
      version: "v1alpha1",
      namespace: "default",
      plural: "clonesets",
      body: {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "CloneSet",
        metadata: { name: "arena" },
        spec: { replicas: 4, scaleStrategy: { podsToDelete: ["arena-x"] } },
      },
    });
    const read = (await custom.getNamespacedCustomObject({
      group: "apps.kruise.io",
      version: "v1alpha1",
      namespace: "default",
      plural: "clonesets",
      name: "arena",
    })) as { spec: unknown };
    expect(read.spec).toEqual({ replicas: 4, scaleStrategy: { podsToDelete: ["arena-x"] } });
    const discovery = (await (await fetch(`${member.url}/apis/apps.kruise.io/v1alpha1`)).json()) as {
      resources: { name: string; kind: string; shortNames?: string[] }[];
    };
    expect(discovery.resources[0]).toMatchObject({
      name: "clonesets",
      kind: "CloneSet",
      shortNames: ["clone"],
    });
  });
});
