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
    // kubectl's typed generators (create namespace, create configmap) send protobuf.
    expect(await kubectl("create", "namespace", "other")).toMatchObject({
      code: 0,
      stdout: "namespace/other created\n",
    });
    expect((await kubectl("-n", "shop", "label", "configmap", "a", "tier=web")).code).toBe(0);
    expect((await kubectl("-n", "shop", "get", "cm", "-l", "tier=web", "-o", "name")).stdout).toBe(
      "configmap/a\n",
    );
    expect((await kubectl("-n", "shop", "get", "cm", "-l", "tier!=web", "-o", "name")).stdout).toBe(
      "configmap/b\n",
    );
    expect((await kubectl("get", "ns", "-o", "name")).stdout).toBe(
      "namespace/default\nnamespace/kube-system\nnamespace/other\nnamespace/shop\n",
    );
  });

  // Each typed generator sends its object as protobuf and reads the answer as protobuf.
  it.each([
    [
      ["create", "deployment", "api", "--image=registry.example.com/api:1", "--replicas=0"],
      "deployment.apps/api created",
      "deployment/api",
      "{.spec.replicas}",
      "0",
    ],
    [
      ["create", "configmap", "settings", "--from-literal=mode=fast"],
      "configmap/settings created",
      "configmap/settings",
      "{.data.mode}",
      "fast",
    ],
    [
      ["create", "secret", "generic", "creds", "--from-literal=user=demo"],
      "secret/creds created",
      "secret/creds",
      "{.data.user}",
      Buffer.from("demo").toString("base64"),
    ],
    [
      ["create", "service", "clusterip", "api", "--tcp=80:8080"],
      "service/api created",
      "service/api",
      "{.spec.ports[0].targetPort}",
      "8080",
    ],
    [
      ["create", "job", "once", "--image=registry.example.com/job:1"],
      "job.batch/once created",
      "job/once",
      "{.spec.template.spec.restartPolicy}",
      "Never",
    ],
    [
      ["create", "cronjob", "nightly", "--image=registry.example.com/job:1", "--schedule=0 3 * * *"],
      "cronjob.batch/nightly created",
      "cronjob/nightly",
      "{.spec.schedule}",
      "0 3 * * *",
    ],
    [
      ["create", "role", "reader", "--verb=get,list", "--resource=pods"],
      "role.rbac.authorization.k8s.io/reader created",
      "role/reader",
      "{.rules[0].verbs}",
      '["get","list"]',
    ],
    [
      ["create", "rolebinding", "readers", "--role=reader", "--user=dev"],
      "rolebinding.rbac.authorization.k8s.io/readers created",
      "rolebinding/readers",
      "{.subjects[0].name}",
      "dev",
    ],
    [
      ["create", "serviceaccount", "robot"],
      "serviceaccount/robot created",
      "serviceaccount/robot",
      "{.metadata.name}",
      "robot",
    ],
    [
      ["create", "clusterrole", "viewer", "--verb=get", "--resource=nodes"],
      "clusterrole.rbac.authorization.k8s.io/viewer created",
      "clusterrole/viewer",
      "{.rules[0].resources}",
      '["nodes"]',
    ],
    [
      ["create", "poddisruptionbudget", "api", "--selector=app=api", "--min-available=1"],
      "poddisruptionbudget.policy/api created",
      "pdb/api",
      "{.spec.minAvailable}",
      "1",
    ],
    [
      ["create", "ingress", "web", "--rule=web.example.com/=api:80"],
      "ingress.networking.k8s.io/web created",
      "ingress/web",
      "{.spec.rules[0].host}",
      "web.example.com",
    ],
    [
      ["run", "shell", "--image=registry.example.com/shell:1", "--restart=Never"],
      "pod/shell created",
      "pod/shell",
      "{.spec.restartPolicy}",
      "Never",
    ],
  ])("kubectl %j", async (args, said, object, path, value) => {
    expect(await kubectl("-n", "default", ...args)).toMatchObject({ code: 0, stdout: `${said}\n` });
    expect((await kubectl("-n", "default", "get", object, "-o", `jsonpath=${path}`)).stdout).toBe(value);
  });

  it("creates a priority class, a service account token and approves a certificate request", async () => {
    expect(await kubectl("create", "priorityclass", "high", "--value=1000")).toMatchObject({
      code: 0,
      stdout: "priorityclass.scheduling.k8s.io/high created\n",
    });
    expect(
      (await kubectl("get", "pc", "high", "-o", "wide", "--no-headers")).stdout.trim().split(/\s+/),
    ).toEqual(["high", "1000", "false", expect.stringMatching(/^\d+s$/), "PreemptLowerPriority"]);
    expect((await kubectl("create", "serviceaccount", "bot")).code).toBe(0);
    const token = await kubectl("create", "token", "bot", "--duration=10m");
    expect(token).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^[\w-]+\.[\w-]+\.simulated-[0-9a-f]{16}$/),
    });
    // A JWT's shape, as the API server's: the account and an expiry ten minutes on.
    const claims = JSON.parse(Buffer.from(token.stdout.split(".")[1] ?? "", "base64url").toString("utf8"));
    expect(claims.sub).toBe("system:serviceaccount:default:bot");
    expect(claims.exp - claims.iat).toBe(600);
    writeFileSync(
      `${dir}/csr.json`,
      JSON.stringify({
        apiVersion: "certificates.k8s.io/v1",
        kind: "CertificateSigningRequest",
        metadata: { name: "dev" },
        spec: {
          request: Buffer.from("not a real request").toString("base64"),
          signerName: "kubernetes.io/kube-apiserver-client",
          usages: ["client auth"],
        },
      }),
    );
    expect((await kubectl("create", "-f", `${dir}/csr.json`)).code).toBe(0);
    expect((await kubectl("get", "csr", "dev", "--no-headers")).stdout).toMatch(
      /^dev\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+system:admin\s+<none>\s+Pending\n$/,
    );
    expect(await kubectl("certificate", "approve", "dev")).toMatchObject({
      code: 0,
      stdout: "certificatesigningrequest.certificates.k8s.io/dev approved\n",
    });
    expect((await kubectl("get", "csr", "dev", "--no-headers")).stdout).toMatch(/\sApproved\n$/);
  });

  it("explains kinds and fields with the release's descriptions", async () => {
    const pods = await kubectl("explain", "pods");
    expect(pods).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /^KIND:\s+Pod\nVERSION:\s+v1\n\nDESCRIPTION:\n\s+Pod is a collection of containers/,
      ),
    });
    expect((await kubectl("explain", "deployment.spec.replicas")).stdout).toMatch(
      /FIELD: replicas <integer>[\s\S]*Number of desired pods/,
    );
    expect((await kubectl("explain", "pods.spec.nope")).code).toBe(1);
  });

  it("exposes a deployment and answers auth can-i, whoami and --list", async () => {
    expect(
      await kubectl("create", "deployment", "site", "--image=registry.example.com/site:1"),
    ).toMatchObject({ code: 0 });
    expect(await kubectl("expose", "deployment", "site", "--port=80", "--target-port=8080")).toMatchObject({
      code: 0,
      stdout: "service/site exposed\n",
    });
    expect((await kubectl("get", "svc", "site", "-o", "jsonpath={.spec.selector.app}")).stdout).toBe("site");
    expect(await kubectl("auth", "can-i", "create", "deployments")).toMatchObject({
      code: 0,
      stdout: "yes\n",
    });
    expect((await kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")).stdout).toBe(
      "system:admin",
    );
    expect((await kubectl("auth", "can-i", "--list")).stdout).toMatch(/^\*\.\*\s/m);
  });
});
