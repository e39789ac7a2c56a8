import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { customResourceDefinition } from "../helpers/crd.js";
import { tempDir } from "../helpers/git-repo.js";
import { kubectlStream, kubectl as kubectlWith, until, writeKubeconfig } from "../helpers/member.js";

/** Server-side printing: what `kubectl get` shows comes from the member's Tables. */
let member: SimulatedMember;
let dir: string;
let cleanup: () => void;
beforeAll(async () => {
  member = await startMember({ name: "east", world: { readyDelayMs: 20 } });
  ({ dir, cleanup } = tempDir("gitfleet-tables-"));
  writeKubeconfig(`${dir}/kubeconfig`, [member]);
});
afterAll(async () => {
  await member.close();
  cleanup();
});

const kubectl = (...args: string[]) => kubectlWith(`${dir}/kubeconfig`, ...args);
const TABLE =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
const headerOf = (stdout: string) => (stdout.split("\n")[0] ?? "").trim().split(/\s{2,}/);

async function table(path: string): Promise<{ status: number; body: JsonMap }> {
  const response = await fetch(`${member.url}${path}`, { headers: { accept: TABLE } });
  return { status: response.status, body: (await response.json()) as JsonMap };
}

describe("Tables", () => {
  beforeAll(async () => {
    expect(
      (await kubectl("create", "deployment", "web", "--image=registry.example.com/web:1", "--replicas=2"))
        .code,
    ).toBe(0);
    await until(async () =>
      (await kubectl("get", "deploy", "web", "-o", "jsonpath={.status.readyReplicas}")).stdout === "2"
        ? true
        : undefined,
    );
  });

  it.each([
    [
      ["get", "pods"],
      ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
    ],
    [
      ["get", "pods", "-o", "wide"],
      ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"],
    ],
    [
      ["get", "pods", "-A"],
      ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"],
    ],
    [
      ["get", "deploy", "--show-labels"],
      ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "LABELS"],
    ],
    [
      ["get", "deploy", "-o", "wide"],
      ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
    ],
    [
      ["get", "rs"],
      ["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
    ],
    [
      ["get", "nodes"],
      ["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
    ],
    [
      ["get", "ns"],
      ["NAME", "STATUS", "AGE"],
    ],
  ])("kubectl %j prints the API server's columns", async (args, header) => {
    const result = await kubectl(...args);
    expect(result.code).toBe(0);
    expect(headerOf(result.stdout)).toEqual(header);
  });

  it("lists every workload kind for kubectl get all, by discovery's all category", async () => {
    const { code, stdout, stderr } = await kubectl("get", "all", "-o", "name");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const kinds = new Set(
      stdout
        .trim()
        .split("\n")
        .map((line) => line.split("/")[0]),
    );
    // The deployment, its ReplicaSet and pods, and the default namespace's kubernetes Service if any.
    for (const kind of ["deployment.apps", "replicaset.apps", "pod"]) expect(kinds, kind).toContain(kind);
    // Never what is not a workload (ConfigMaps, Secrets, roles).
    for (const kind of ["configmap", "secret", "role.rbac.authorization.k8s.io"])
      expect(kinds).not.toContain(kind);
  });

  it("prints rows from the objects: ready counts and selectors", async () => {
    const deployments = (await kubectl("get", "deploy", "-o", "wide", "--no-headers")).stdout
      .trim()
      .split(/\s+/);
    expect(deployments).toEqual([
      "web",
      "2/2",
      "2",
      "2",
      expect.stringMatching(/^\d+s$/),
      "web",
      "registry.example.com/web:1",
      "app=web",
    ]);
    const labels = (await kubectl("get", "deploy", "web", "--show-labels", "--no-headers")).stdout
      .trim()
      .split(/\s+/);
    expect(labels.at(-1)).toBe("app=web");
  });

  it("gives the row's object as includeObject asks: metadata, all of it, or none", async () => {
    const metadata = await table("/apis/apps/v1/namespaces/default/deployments");
    const row = (metadata.body.rows as JsonMap[])[0] as JsonMap;
    expect(metadata.body).toMatchObject({
      kind: "Table",
      apiVersion: "meta.k8s.io/v1",
      metadata: { resourceVersion: expect.any(String) },
    });
    expect(row.object).toEqual({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: expect.objectContaining({ name: "web" }),
    });
    const whole = await table("/apis/apps/v1/namespaces/default/deployments?includeObject=Object");
    expect(((whole.body.rows as JsonMap[])[0] as JsonMap).object).toMatchObject({
      kind: "Deployment",
      spec: { replicas: 2 },
    });
    const none = await table("/apis/apps/v1/namespaces/default/deployments/web?includeObject=None");
    expect((none.body.rows as JsonMap[])[0]).toEqual({ cells: expect.any(Array) });
    const wrong = await table("/apis/apps/v1/namespaces/default/deployments?includeObject=Everything");
    expect(wrong).toMatchObject({
      status: 400,
      body: { reason: "BadRequest", message: 'unrecognized includeObject value: "Everything"' },
    });
  });

  it("prints a custom resource by its CRD's columns", async () => {
    const crd = customResourceDefinition({
      group: "example.com",
      kind: "Widget",
      plural: "widgets",
      singular: "widget",
      schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      version: { additionalPrinterColumns: [{ name: "Size", type: "integer", jsonPath: ".spec.size" }] },
    });
    const created = await fetch(`${member.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(crd),
    });
    expect(created.status).toBe(201);
    const widget = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w1", namespace: "default" },
      spec: { size: 4 },
    };
    await fetch(`${member.url}/apis/example.com/v1/namespaces/default/widgets`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(widget),
    });
    // A kind without a printer of its own: NAME and CREATED AT (the time as it is).
    const crds = await kubectl("get", "crd");
    expect(headerOf(crds.stdout)).toEqual(["NAME", "CREATED AT"]);
    expect(crds.stdout.split("\n")[1]).toMatch(/^widgets\.example\.com\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const result = await kubectl("get", "widgets");
    expect(headerOf(result.stdout)).toEqual(["NAME", "SIZE"]);
    expect(result.stdout.split("\n")[1]?.trim().split(/\s+/)).toEqual(["w1", "4"]);
  });

  it("streams Tables to a watch: column definitions first, then rows", async () => {
    const controller = new AbortController();
    const response = await fetch(`${member.url}/api/v1/namespaces/default/configmaps?watch=true`, {
      headers: { accept: TABLE },
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const lines: JsonMap[] = [];
    let buffered = "";
    const read = async () => {
      while (lines.length < 2) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += Buffer.from(value).toString("utf8");
        for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
          lines.push(JSON.parse(buffered.slice(0, at)) as JsonMap);
          buffered = buffered.slice(at + 1);
        }
      }
    };
    const reading = read();
    await kubectl("create", "configmap", "first", "--from-literal=a=1");
    await kubectl("create", "configmap", "second", "--from-literal=a=1");
    await reading;
    controller.abort();
    const [first, second] = lines.map((event) => event.object as JsonMap);
    expect(first).toMatchObject({
      kind: "Table",
      columnDefinitions: [{ name: "Name" }, { name: "Data" }, { name: "Age" }],
    });
    expect(second?.columnDefinitions).toBeUndefined();
    expect(((second?.rows ?? []) as JsonMap[])[0]?.cells).toEqual(["second", 1, expect.any(String)]);
  });

  it("kubectl get -w prints the header once and a row per change", async () => {
    const watching = kubectlStream(`${dir}/kubeconfig`, "get", "cm", "-w");
    // The list first (its header), then the change.
    await watching.seen("NAME");
    await kubectl("create", "configmap", "third", "--from-literal=a=1");
    await watching.seen("\nthird ");
    const lines = (await watching.stop()).trim().split("\n");
    expect(headerOf(lines[0] ?? "")).toEqual(["NAME", "DATA", "AGE"]);
    expect(lines.filter((line) => line.startsWith("NAME"))).toHaveLength(1);
    expect(lines.some((line) => line.startsWith("third "))).toBe(true);
  });
});
