import { describe, expect, it } from "vitest";
import { findPodReferences } from "../../src/render/dependents.js";

describe("dependents that follow a workload", () => {
  it("finds ConfigMaps, Secrets, PVCs and the ServiceAccount anywhere in the pod spec", () => {
    const podSpec = {
      serviceAccountName: "arena",
      imagePullSecrets: [{ name: "registry-pull" }],
      volumes: [
        { name: "a", configMap: { name: "cm-volume" } },
        { name: "b", secret: { secretName: "secret-volume" } },
        { name: "c", persistentVolumeClaim: { claimName: "maps" } },
        {
          name: "d",
          projected: {
            sources: [
              { configMap: { name: "cm-projected" } },
              { secret: { name: "secret-projected" } },
              { serviceAccountToken: { path: "t" } },
            ],
          },
        },
        { name: "e", emptyDir: {} },
      ],
      initContainers: [{ name: "i", envFrom: [{ configMapRef: { name: "cm-init" } }] }],
      containers: [
        {
          name: "w",
          env: [
            { name: "A", valueFrom: { secretKeyRef: { name: "secret-env", key: "k" } } },
            { name: "B", valueFrom: { configMapKeyRef: { name: "cm-env", key: "k" } } },
            { name: "C", value: "x" },
          ],
          envFrom: [{ secretRef: { name: "secret-envfrom" } }, { configMapRef: { name: "cm-volume" } }],
        },
      ],
    };
    expect(findPodReferences(podSpec)).toEqual({
      configMaps: ["cm-env", "cm-init", "cm-projected", "cm-volume"],
      secrets: ["registry-pull", "secret-env", "secret-envfrom", "secret-projected", "secret-volume"],
      persistentVolumeClaims: ["maps"],
      serviceAccounts: ["arena"],
    });
  });

  it.each([
    ["the default ServiceAccount does not follow", { serviceAccountName: "default" }],
    ["an empty pod spec references nothing", {}],
    ["malformed input is ignored, not thrown on", { volumes: "oops", containers: [null, 3, { env: "x" }] }],
  ])("%s", (_name, podSpec) => {
    expect(findPodReferences(podSpec)).toEqual({
      configMaps: [],
      secrets: [],
      persistentVolumeClaims: [],
      serviceAccounts: [],
    });
  });
});
