import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { tempDir } from "../helpers/git-repo.js";
import { kubectl as kubectlWith, writeKubeconfig } from "../helpers/member.js";

/** kubectl — a client nobody here wrote — against a simulated member. */
let member: SimulatedMember;
let dir: string;
let cleanup: () => void;

function kubectlVersion(): string {
  const found = spawnSync("kubectl", ["version", "--client", "-o", "json"], { encoding: "utf8" });
  if (found.error || found.status !== 0)
    throw new Error(
      "kubectl is not installed: these tests need kubectl 1.32 on the PATH (see docs/development.md)",
    );
  return found.stdout;
}

beforeAll(async () => {
  kubectlVersion();
  member = await startMember({ name: "east" });
  ({ dir, cleanup } = tempDir("gitfleet-kubectl-"));
  writeKubeconfig(`${dir}/kubeconfig`, [member]);
});
afterAll(async () => {
  await member.close();
  cleanup();
});

const kubectl = (...args: string[]) => kubectlWith(`${dir}/kubeconfig`, ...args);

describe("kubectl against a simulated member", () => {
  it("lists the served resources with their short names and scopes", async () => {
    const result = await kubectl("api-resources", "--no-headers");
    expect(result.stderr).toBe("");
    const rows = result.stdout.split("\n").map((line) => line.trim().split(/\s+/));
    expect(rows).toContainEqual(["deployments", "deploy", "apps/v1", "true", "Deployment"]);
    expect(rows).toContainEqual(["namespaces", "ns", "v1", "false", "Namespace"]);
    expect(rows).toContainEqual([
      "customresourcedefinitions",
      "crd,crds",
      "apiextensions.k8s.io/v1",
      "false",
      "CustomResourceDefinition",
    ]);
  });

  it("creates, gets, patches by strategic merge and deletes", async () => {
    writeFileSync(
      `${dir}/web.yaml`,
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - {name: main, image: registry.example.com/web:1.0.0}\n      - {name: sidecar, image: registry.example.com/proxy:2.0.0}\n",
    );
    expect(await kubectl("create", "-f", `${dir}/web.yaml`)).toMatchObject({
      code: 0,
      stdout: "deployment.apps/web created\n",
    });
    expect((await kubectl("get", "deploy", "web", "-o", "jsonpath={.metadata.generation}")).stdout).toBe("1");
    const patched = await kubectl(
      "patch",
      "deployment",
      "web",
      "--type",
      "strategic",
      "-p",
      '{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"registry.example.com/web:1.1.0"}]}}}}',
    );
    expect(patched).toMatchObject({ code: 0, stdout: "deployment.apps/web patched\n" });
    const images = (
      await kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[*].image}")
    ).stdout;
    expect(images).toBe("registry.example.com/web:1.1.0 registry.example.com/proxy:2.0.0");
    expect(await kubectl("delete", "deploy", "web")).toMatchObject({
      code: 0,
      stdout: 'deployment.apps "web" deleted\n',
    });
    expect(await kubectl("get", "deploy", "web")).toMatchObject({
      code: 1,
      stderr: 'Error from server (NotFound): deployments.apps "web" not found\n',
    });
  });

  it("sees namespaces and label selections as a real cluster shows them", async () => {
    writeFileSync(
      `${dir}/shop.yaml`,
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: shop}\ndata: {x: "1"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: shop}\ndata: {x: "2"}\n',
    );
    expect((await kubectl("create", "-f", `${dir}/shop.yaml`)).stdout).toBe(
      "namespace/shop created\nconfigmap/a created\nconfigmap/b created\n",
    );
    // kubectl's typed generators (create namespace, create configmap) send protobuf, which the simulator refuses with 415.
    expect(await kubectl("create", "namespace", "other")).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/UnsupportedMediaType/),
    });
    expect((await kubectl("-n", "shop", "label", "configmap", "a", "tier=web")).code).toBe(0);
    expect((await kubectl("-n", "shop", "get", "cm", "-l", "tier=web", "-o", "name")).stdout).toBe(
      "configmap/a\n",
    );
    expect((await kubectl("-n", "shop", "get", "cm", "-l", "tier!=web", "-o", "name")).stdout).toBe(
      "configmap/b\n",
    );
    expect((await kubectl("get", "ns", "-o", "name")).stdout).toBe(
      "namespace/default\nnamespace/kube-system\nnamespace/shop\n",
    );
  });
});
