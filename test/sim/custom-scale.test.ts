import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { clientConfig } from "../helpers/member.js";

/** A CRD's scale subresource reads and writes the paths the CRD declares, as the API server does. */
let member: SimulatedMember;
let custom: k8s.CustomObjectsApi;

const ref = { group: "games.example.com", version: "v1", namespace: "default", plural: "arenas" };

beforeAll(async () => {
  member = await startMember({ name: "east" });
  const config = clientConfig(member);
  await config.makeApiClient(k8s.ApiextensionsV1Api).createCustomResourceDefinition({
    body: {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "arenas.games.example.com" },
      spec: {
        group: "games.example.com",
        scope: "Namespaced",
        names: { plural: "arenas", singular: "arena", kind: "Arena" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", x_kubernetes_preserve_unknown_fields: true } },
            subresources: {
              status: {},
              scale: {
                specReplicasPath: ".spec.size",
                statusReplicasPath: ".status.running",
                labelSelectorPath: ".status.selector",
              },
            },
          },
        ],
      },
    },
  });
  custom = config.makeApiClient(k8s.CustomObjectsApi);
  const created = (await custom.createNamespacedCustomObject({
    ...ref,
    body: {
      apiVersion: "games.example.com/v1",
      kind: "Arena",
      metadata: { name: "main" },
      spec: { size: 3, map: "desert" },
    },
  })) as { metadata: { resourceVersion: string } };
  // A custom resource is replaced only with the version it replaces, as on a real server.
  await custom.replaceNamespacedCustomObjectStatus({
    ...ref,
    name: "main",
    body: {
      apiVersion: "games.example.com/v1",
      kind: "Arena",
      metadata: { name: "main", resourceVersion: created.metadata.resourceVersion },
      status: { running: 2, selector: "arena=main" },
    },
  });
});
afterAll(() => member.close());

describe("a custom resource's scale subresource", () => {
  it("reads replicas, status replicas and the selector from the declared paths", async () => {
    const scale = (await custom.getNamespacedCustomObjectScale({ ...ref, name: "main" })) as k8s.V1Scale;
    expect(scale.kind).toBe("Scale");
    expect(scale.spec?.replicas).toBe(3);
    expect(scale.status).toEqual({ replicas: 2, selector: "arena=main" });
  });

  it("writes replicas to the declared spec path and leaves the rest of the object alone", async () => {
    const scale = (await custom.getNamespacedCustomObjectScale({ ...ref, name: "main" })) as k8s.V1Scale;
    await custom.replaceNamespacedCustomObjectScale({
      ...ref,
      name: "main",
      body: { ...scale, spec: { replicas: 7 } },
    });
    const object = (await custom.getNamespacedCustomObject({ ...ref, name: "main" })) as {
      spec: unknown;
      status: unknown;
      metadata: { generation: number };
    };
    expect(object.spec).toEqual({ size: 7, map: "desert" });
    expect(object.status).toEqual({ running: 2, selector: "arena=main" });
    expect(object.metadata.generation).toBe(2);
  });

  it("accepts a merge patch of the Scale", async () => {
    await custom.patchNamespacedCustomObjectScale(
      { ...ref, name: "main", body: { spec: { replicas: 1 } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    const scale = (await custom.getNamespacedCustomObjectScale({ ...ref, name: "main" })) as k8s.V1Scale;
    expect(scale.spec?.replicas).toBe(1);
  });
});
