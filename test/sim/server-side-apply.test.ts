import { writeFileSync } from "node:fs";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
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
const k8sCore = () => config.makeApiClient(k8s.CoreV1Api);

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
    // A plain writer is named with its apiVersion, not the time of its write, as the API server does
    // (a real kube-apiserver's answer, test/e2e/kubectl-parity.e2e.ts).
    expect(refused).toMatchObject({
      code: 409,
      causes: [
        {
          reason: "FieldManagerConflict",
          message: 'conflict with "autoscaler" using apps/v1',
          field: ".spec.replicas",
        },
      ],
    });
    expect(refused.message).toBe(
      'Apply failed with 1 conflict: conflict with "autoscaler" using apps/v1: .spec.replicas',
    );
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
    // An applier is named alone.
    expect(refused.stderr).toContain('conflict with "kubectl": .data.level');
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

  // Each of these was a difference test/e2e/parity.e2e.ts found between a simulated member and a real
  // kube-apiserver; the simulator now answers as the real one.
  it("answers as a real API server: no empty metadata fields, subresource writers, Deployment defaults, precondition messages", async () => {
    const created = await apply(web(2), "gitfleet");
    // The applied Deployment names only name and namespace besides its labels: ...
    const configMap = await k8sCore().createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "plain", namespace: "default" }, data: { a: "1" } },
      fieldManager: "alpha",
    });
    // ... and a ConfigMap with only a name and namespace records no "f:metadata" at all.
    expect(Object.keys(configMap.metadata?.managedFields?.[0]?.fieldsV1 as object)).toEqual(["f:data"]);
    // The server's defaults are filled in.
    expect(created.spec).toMatchObject({
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
    });
    expect(created.spec?.template.spec).toMatchObject({
      restartPolicy: "Always",
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
      terminationGracePeriodSeconds: 30,
    });
    expect(created.spec?.template.spec?.containers[0]).toMatchObject({
      imagePullPolicy: "IfNotPresent",
      terminationMessagePath: "/dev/termination-log",
    });
    // An apply of nothing but a name owns nothing: no managedFields at all.
    const bare = await k8sCore().patchNamespace(
      {
        name: "bare",
        body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "bare" } },
        fieldManager: "alpha",
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply),
    );
    expect(bare.metadata?.uid).toBeDefined();
    expect(bare.metadata?.managedFields).toBeUndefined();
    // A write through the scale subresource is recorded as such.
    await apps().patchNamespacedDeploymentScale(
      { name: "web", namespace: "default", body: { spec: { replicas: 5 } }, fieldManager: "scaler" },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    const scaled = await apps().readNamespacedDeployment({ name: "web", namespace: "default" });
    expect(scaled.metadata?.managedFields?.find((m) => m.manager === "scaler")?.subresource).toBe("scale");
    // A delete for another uid is refused with the API server's words.
    const refused = await k8sCore()
      .deleteNamespacedConfigMap({
        name: "plain",
        namespace: "default",
        body: { preconditions: { uid: "00000000-0000-0000-0000-000000000000" } },
      })
      .then(
        () => "",
        (error: unknown) => String((error as { body?: unknown }).body),
      );
    expect(refused).toContain(
      `the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (${configMap.metadata?.uid}). The object might have been deleted and then recreated`,
    );
  });
});
