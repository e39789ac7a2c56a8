import { writeFileSync } from "node:fs";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/member/member-server.js";
import { tempDir } from "../helpers/git-repo.js";
import { clientConfig, kubectl as kubectlWith, writeKubeconfig } from "../helpers/member.js";

/** Server-side apply with field managers, through client-node and kubectl. */
let member: SimulatedMember;
let config: k8s.KubeConfig;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  member = await startMember({ name: "east" });
  config = clientConfig(member);
  ({ dir, cleanup } = tempDir("gitfleet-ssa-"));
  writeKubeconfig(`${dir}/kubeconfig`, [member]);
});
afterAll(async () => {
  await member.close();
  cleanup();
});

const apps = () => config.makeApiClient(k8s.AppsV1Api);

function web(replicas: number, extra: Record<string, string> = {}, sidecar = true): k8s.V1Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default", labels: { app: "web", ...extra } },
    spec: {
      replicas,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          containers: [
            { name: "main", image: "registry.example.com/web:1.0.0" },
            ...(sidecar ? [{ name: "proxy", image: "registry.example.com/proxy:2.0.0" }] : []),
          ],
        },
      },
    },
  };
}

async function apply(body: k8s.V1Deployment, manager: string, force = false) {
  return apps().patchNamespacedDeployment(
    { name: "web", namespace: "default", body, fieldManager: manager, force },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply),
  );
}

async function conflictOf(
  call: Promise<unknown>,
): Promise<{ code: number; message: string; causes: { field: string }[] }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof k8s.ApiException)) throw error;
    const body = JSON.parse(String(error.body)) as {
      message: string;
      details: { causes: { field: string }[] };
    };
    return { code: error.code, message: body.message, causes: body.details.causes };
  }
  throw new Error("the apply succeeded");
}

describe("server-side apply on a simulated member", () => {
  it("records field managers, refuses another manager's fields unless forced, and removes what a manager stops applying", async () => {
    const created = await apply(web(3), "gitfleet");
    expect(created.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([
      ["gitfleet", "Apply"],
    ]);
    const fields = created.metadata?.managedFields?.[0]?.fieldsV1 as Record<string, Record<string, unknown>>;
    expect(Object.keys(fields["f:spec"] ?? {})).toEqual(
      expect.arrayContaining(["f:replicas", "f:selector", "f:template"]),
    );
    expect(JSON.stringify(fields)).toContain('"k:{\\"name\\":\\"main\\"}"');

    // An HPA-like controller takes replicas over with a plain update.
    await apps().patchNamespacedDeployment(
      { name: "web", namespace: "default", body: { spec: { replicas: 7 } }, fieldManager: "autoscaler" },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    const refused = await conflictOf(apply(web(3), "gitfleet"));
    expect(refused).toMatchObject({
      code: 409,
      message: 'Apply failed with 1 conflict: conflict with "autoscaler" using apps/v1: .spec.replicas',
      causes: [{ field: ".spec.replicas" }],
    });
    // The same value is no conflict: ownership is shared.
    const shared = await apply(web(7), "gitfleet");
    expect(shared.spec?.replicas).toBe(7);
    // Applying the same again changes nothing, so nothing is written: the resourceVersion stays.
    expect((await apply(web(7), "gitfleet")).metadata?.resourceVersion).toBe(
      shared.metadata?.resourceVersion,
    );
    const forced = await apply(web(4), "gitfleet", true);
    expect(forced.spec?.replicas).toBe(4);
    expect(forced.metadata?.managedFields?.find((m) => m.manager === "autoscaler")).toBeUndefined();

    // Stop applying the sidecar and a label: they go; fields another manager set stay.
    await apps().patchNamespacedDeployment(
      {
        name: "web",
        namespace: "default",
        body: { metadata: { annotations: { note: "kept" } } },
        fieldManager: "person",
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await apply(web(4, { tier: "front" }), "gitfleet");
    const trimmed = await apply(web(4, {}, false), "gitfleet");
    expect(trimmed.spec?.template.spec?.containers.map((c) => c.name)).toEqual(["main"]);
    expect(trimmed.metadata?.labels).toEqual({ app: "web" });
    expect(trimmed.metadata?.annotations).toEqual({ note: "kept" });
    // Created 1, replicas by the autoscaler 2, forced replicas 3, sidecar removed 4; label changes leave it.
    expect(trimmed.metadata?.generation).toBe(4);
  });

  it("works with kubectl apply --server-side, another field manager, and --force-conflicts", async () => {
    const kubectl = (...args: string[]) => kubectlWith(`${dir}/kubeconfig`, ...args);
    writeFileSync(
      `${dir}/cm.yaml`,
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {level: info}\n",
    );
    expect(await kubectl("apply", "--server-side", "-f", `${dir}/cm.yaml`)).toMatchObject({
      code: 0,
      stdout: "configmap/settings serverside-applied\n",
    });
    writeFileSync(
      `${dir}/cm2.yaml`,
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {level: debug}\n",
    );
    const refused = await kubectl(
      "apply",
      "--server-side",
      "--field-manager",
      "other",
      "-f",
      `${dir}/cm2.yaml`,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('conflict with "kubectl" using v1: .data.level');
    const forced = await kubectl(
      "apply",
      "--server-side",
      "--field-manager",
      "other",
      "--force-conflicts",
      "-f",
      `${dir}/cm2.yaml`,
    );
    expect(forced).toMatchObject({ code: 0, stdout: "configmap/settings serverside-applied\n" });
    expect((await kubectl("get", "cm", "settings", "-o", "jsonpath={.data.level}")).stdout).toBe("debug");
  });
});
