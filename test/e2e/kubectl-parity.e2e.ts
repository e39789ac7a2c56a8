import { execFile, execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import fetch from "node-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { simulatedKubeconfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { decodeObject, encodeObject, PROTOBUF_MEDIA_TYPE } from "../../src/sim/protobuf/kube-protobuf.js";
import { comparableAnswer } from "../helpers/api-answer.js";
import { customResourceDefinition, declaredSpec } from "../helpers/crd.js";
import { until } from "../helpers/member.js";
import {
  MERGE,
  NARROWER_SIZE,
  sendWidgetRequest,
  WIDGET_CRD,
  WIDGET_CRD_PATH,
  WIDGET_NAMESPACE,
  WIDGET_REQUESTS,
  WIDGETS,
  widget,
} from "../helpers/widget-schema.js";
import { type ControlPlanes, startControlPlanes } from "./cluster/control-plane.js";
import { NodeSimulator } from "./cluster/node-simulator.js";

/**
 * kubectl, as a new user types it, against a real kube-apiserver (with kube-controller-manager, the
 * scheduler and fake kubelets) and against a simulated member: the same commands in the same order,
 * the same exit codes, the same column headers, the same messages where kubectl prints one. What the
 * real tier cannot answer because it has no kubelet serving logs and no metrics-server (logs, top) is
 * run against the simulated member alone, and the real tier's refusal is checked to be that.
 */
const BUILD = fileURLToPath(new URL("./cluster/build.sh", import.meta.url));
const NS = "parity";

let planes: ControlPlanes;
let nodes: NodeSimulator;
let member: SimulatedMember;
let realConfig: string;
let simConfig: string;

beforeAll(async () => {
  const binDir = execFileSync("bash", [BUILD], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;
  planes = await startControlPlanes({ binDir, names: ["kubectl"] });
  realConfig = planes.kubeconfig;
  const config = new k8s.KubeConfig();
  config.loadFromFile(realConfig);
  nodes = new NodeSimulator({
    cluster: "kubectl",
    client: new MemberClient("kubectl", config, { retries: 2 }),
    nodes: 3,
    allocatable: { cpu: "4", memory: "16Gi", pods: "110" },
  });
  await nodes.start();
  member = await startMember({ name: "sim", world: { readyDelayMs: 50 } });
  simConfig = join(planes.runDir, "sim.kubeconfig");
  writeFileSync(simConfig, simulatedKubeconfig([member]));
  // A certificate signing request for `kubectl certificate approve`, made here, of a throwaway key.
  const key = join(planes.runDir, "dev.key");
  execFileSync(
    "openssl",
    [
      "req",
      "-new",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-subj",
      "/CN=dev",
      "-out",
      join(planes.runDir, "dev.csr"),
    ],
    { stdio: "ignore" },
  );
  writeFileSync(
    CSR_FILE(),
    JSON.stringify({
      apiVersion: "certificates.k8s.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name: "dev" },
      spec: {
        request: readFileSync(join(planes.runDir, "dev.csr")).toString("base64"),
        signerName: "kubernetes.io/kube-apiserver-client",
        expirationSeconds: 86400,
        usages: ["client auth"],
      },
    }),
  );
}, 900_000);

afterAll(async () => {
  nodes?.stop();
  await member?.close();
  await planes?.stop();
});

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function kubectl(
  kubeconfig: string,
  args: readonly string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<Result> {
  return new Promise((resolve) =>
    execFile(
      "kubectl",
      ["--kubeconfig", kubeconfig, ...args],
      { encoding: "utf8", timeout: options.timeoutMs ?? 120_000, env: { ...process.env, ...options.env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : error.killed ? -1 : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    ),
  );
}

/** How two answers are compared beyond the exit code. */
type Compare = "exit" | "header" | "stdout" | "first-line";

interface Step {
  readonly args: readonly string[];
  readonly compare: Compare;
  readonly timeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  /** Killed after its timeout on purpose (a watch): the output so far is compared. */
  readonly watch?: boolean;
}

const n = (...args: string[]) => ["-n", NS, ...args];
const CSR_FILE = () => join(planes.runDir, "dev-csr.json");
const EDITOR = { KUBE_EDITOR: "sed -i -e s/mode:\\ fast/mode:\\ slow/" };

// The commands a new user tries, in the order they build on each other.
const STEPS: readonly Step[] = [
  { args: ["create", "namespace", NS], compare: "stdout" },
  {
    args: n("create", "deployment", "web", "--image=registry.example.com/web:1", "--replicas=2"),
    compare: "stdout",
  },
  { args: n("create", "configmap", "settings", "--from-literal=mode=fast"), compare: "stdout" },
  { args: n("create", "secret", "generic", "creds", "--from-literal=user=demo"), compare: "stdout" },
  { args: n("create", "service", "clusterip", "api", "--tcp=80:8080"), compare: "stdout" },
  { args: n("create", "job", "once", "--image=registry.example.com/job:1"), compare: "stdout" },
  {
    args: n("create", "cronjob", "nightly", "--image=registry.example.com/job:1", "--schedule=0 3 * * *"),
    compare: "stdout",
  },
  { args: n("create", "role", "reader", "--verb=get,list", "--resource=pods"), compare: "stdout" },
  { args: n("create", "rolebinding", "readers", "--role=reader", "--user=dev"), compare: "stdout" },
  { args: n("create", "serviceaccount", "robot"), compare: "stdout" },
  { args: n("create", "service", "nodeport", "edge", "--tcp=80:8080"), compare: "stdout" },
  { args: n("create", "service", "loadbalancer", "public", "--tcp=443:8443"), compare: "stdout" },
  {
    args: n("create", "service", "externalname", "docs", "--external-name=docs.example.com"),
    compare: "stdout",
  },
  {
    args: ["create", "clusterrole", "parity-viewer", "--verb=get,list", "--resource=nodes"],
    compare: "stdout",
  },
  {
    args: ["create", "clusterrolebinding", "parity-viewers", "--clusterrole=parity-viewer", "--group=dev"],
    compare: "stdout",
  },
  { args: n("create", "quota", "small", "--hard=pods=50"), compare: "stdout" },
  {
    args: n("create", "poddisruptionbudget", "web", "--selector=app=web", "--min-available=1"),
    compare: "stdout",
  },
  {
    args: ["create", "priorityclass", "parity-high", "--value=1000", "--description=parity"],
    compare: "stdout",
  },
  { args: n("create", "ingress", "site", "--rule=site.example.com/=web:80"), compare: "stdout" },
  {
    args: n(
      "create",
      "secret",
      "docker-registry",
      "pull",
      "--docker-server=registry.example.com",
      "--docker-username=robot",
      "--docker-password=not-a-real-password",
    ),
    compare: "stdout",
  },
  { args: n("create", "token", "robot", "--duration=10m"), compare: "exit" },
  { args: ["create", "-f", "CSR"], compare: "stdout" },
  { args: ["certificate", "approve", "dev"], compare: "stdout" },
  { args: ["get", "csr", "dev"], compare: "header" },
  { args: ["get", "priorityclass", "parity-high", "-o", "wide"], compare: "header" },
  { args: n("get", "quota,pdb,ingress"), compare: "header" },
  { args: n("expose", "deployment", "web", "--port=80", "--target-port=8080"), compare: "stdout" },
  { args: n("run", "shell", "--image=registry.example.com/shell:1", "--restart=Never"), compare: "stdout" },
  { args: n("create", "deployment", "web", "--image=registry.example.com/web:1"), compare: "stdout" },
  { args: ["auth", "can-i", "create", "deployments", "-n", NS], compare: "stdout" },
  { args: ["auth", "can-i", "--list", "-n", NS], compare: "header" },
  { args: ["api-resources"], compare: "header" },
  { args: ["api-versions"], compare: "exit" },
  { args: ["explain", "pods"], compare: "stdout" },
  { args: ["explain", "deployment.spec.replicas"], compare: "stdout" },
  { args: ["explain", "pods.spec.containers.resources"], compare: "stdout" },
  { args: n("rollout", "status", "deployment/web", "--timeout=120s"), compare: "exit", timeoutMs: 150_000 },
  { args: n("get", "pods"), compare: "header" },
  { args: n("get", "pods", "-o", "wide"), compare: "header" },
  { args: ["get", "pods", "-A"], compare: "header" },
  { args: n("get", "pods", "-l", "app=web", "--show-labels"), compare: "header" },
  { args: n("get", "deploy", "-o", "wide"), compare: "header" },
  {
    args: n("get", "deploy", "web", "--no-headers", "-o", "custom-columns=READY:.status.readyReplicas"),
    compare: "stdout",
  },
  { args: n("get", "rs"), compare: "header" },
  { args: n("get", "svc", "-o", "wide"), compare: "header" },
  { args: n("get", "jobs"), compare: "header" },
  { args: n("get", "cronjobs"), compare: "header" },
  { args: n("get", "cm", "settings"), compare: "header" },
  { args: n("get", "secrets", "creds"), compare: "header" },
  { args: n("get", "sa", "robot"), compare: "header" },
  { args: n("get", "roles"), compare: "header" },
  { args: n("get", "rolebindings", "-o", "wide"), compare: "header" },
  { args: ["get", "nodes"], compare: "header" },
  { args: ["get", "nodes", "-o", "wide"], compare: "header" },
  { args: ["get", "ns", NS], compare: "header" },
  { args: n("get", "events"), compare: "header" },
  { args: n("get", "deploy", "web", "-w"), compare: "first-line", timeoutMs: 3000, watch: true },
  { args: n("describe", "deployment", "web"), compare: "first-line" },
  { args: n("describe", "pod", "shell"), compare: "first-line" },
  { args: n("scale", "deployment", "web", "--replicas=3"), compare: "stdout" },
  { args: n("label", "deployment", "web", "tier=front"), compare: "stdout" },
  { args: n("annotate", "deployment", "web", "note=parity"), compare: "stdout" },
  {
    args: n("patch", "deployment", "web", "--type=merge", "-p", '{"spec":{"revisionHistoryLimit":5}}'),
    compare: "stdout",
  },
  {
    args: n(
      "patch",
      "deployment",
      "web",
      "--type=json",
      "-p",
      '[{"op":"replace","path":"/spec/replicas","value":2}]',
    ),
    compare: "stdout",
  },
  {
    args: n(
      "patch",
      "deployment",
      "web",
      "-p",
      '{"spec":{"template":{"metadata":{"labels":{"release":"two"}}}}}',
    ),
    compare: "stdout",
  },
  { args: n("rollout", "status", "deployment/web", "--timeout=120s"), compare: "exit", timeoutMs: 150_000 },
  { args: n("rollout", "history", "deployment/web"), compare: "stdout" },
  { args: n("rollout", "undo", "deployment/web"), compare: "stdout" },
  { args: n("rollout", "status", "deployment/web", "--timeout=120s"), compare: "exit", timeoutMs: 150_000 },
  { args: n("rollout", "restart", "deployment/web"), compare: "stdout" },
  { args: n("edit", "configmap", "settings"), compare: "stdout", env: EDITOR },
  { args: n("get", "configmap", "settings", "-o", "jsonpath={.data.mode}"), compare: "stdout" },
  { args: n("exec", "shell", "--", "ls"), compare: "exit", timeoutMs: 30_000 },
  { args: n("port-forward", "pod/shell", "18099:80"), compare: "exit", timeoutMs: 30_000 },
  { args: n("get", "pod", "missing"), compare: "stdout" },
  { args: n("delete", "deployment", "web", "--cascade=foreground"), compare: "stdout", timeoutMs: 150_000 },
  { args: n("delete", "job", "once"), compare: "stdout" },
];

// POST an object as protobuf, asking for protobuf back; the answer decoded.
async function createInProtobuf(config: string, object: JsonMap): Promise<JsonMap> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(config);
  const [group, version] = String(object.apiVersion).includes("/")
    ? String(object.apiVersion).split("/")
    : ["", String(object.apiVersion)];
  const plural = `${String(object.kind).toLowerCase()}s`;
  const path = `${group ? `/apis/${group}/${version}` : `/api/${version}`}/namespaces/${NS}/${plural}`;
  // The client's TLS and credentials, then this request's method, headers and body.
  const options = (await kc.applyToFetchOptions({} as never)) as { headers?: Record<string, string> };
  const response = await fetch(`${kc.getCurrentCluster()?.server}${path}`, {
    ...(options as object),
    method: "POST",
    headers: {
      ...options.headers,
      "content-type": PROTOBUF_MEDIA_TYPE,
      accept: `${PROTOBUF_MEDIA_TYPE}, application/json`,
    },
    body: Buffer.from(encodeObject(object)),
  } as never);
  expect(response.headers.get("content-type")).toBe(PROTOBUF_MEDIA_TYPE);
  return decodeObject(new Uint8Array(await response.arrayBuffer()));
}

// An object without what differs by nature: ids, versions, times, a Service's allocated address.
function normalized(object: JsonMap): JsonMap {
  const metadata = { ...asMap(object.metadata) };
  for (const key of ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"])
    delete metadata[key];
  const spec = { ...asMap(object.spec) };
  delete spec.clusterIP;
  delete spec.clusterIPs;
  return { ...object, metadata, ...(object.spec ? { spec } : {}) };
}

// A message with its names and numbers made generic: "Created pod: ev-7c9-abcde" → "Created pod: ev-…".
function generic(message: string): string {
  return message
    .replace(/\b(ev|db|ev-job)-[a-z0-9-]+/g, "$1-…")
    .replace(/kubectl-worker-\d+|kubectl-node-\d+|sim-node-\d+/g, "NODE")
    .replace(/\d+/g, "N");
}

/** What an answer shows that must be the same on both: the exit code and the compared text. */
function shown(step: Step, result: Result): { code: number; text: string } {
  const code = step.watch ? 0 : result.code;
  const lines = result.stdout.split("\n");
  switch (step.compare) {
    case "exit":
      return { code, text: "" };
    case "header":
      return {
        code,
        text: (lines[0] ?? "")
          .trim()
          .split(/\s{2,}/)
          .join(" | "),
      };
    case "first-line":
      return { code, text: (lines[0] ?? "").replace(/\s+/g, " ").trim() };
    case "stdout":
      return { code, text: result.code === 0 ? result.stdout : result.stderr };
  }
}

describe("kubectl against a real API server and a simulated member", () => {
  it(`answers ${STEPS.length} commands alike: exit codes, column headers, messages`, async () => {
    const differences: string[] = [];
    const refused: string[] = [];
    for (const step of STEPS) {
      const args = step.args.map((arg) => (arg === "CSR" ? CSR_FILE() : arg));
      const options = {
        ...(step.timeoutMs ? { timeoutMs: step.timeoutMs } : {}),
        ...(step.env ? { env: step.env } : {}),
      };
      const [real, sim] = await Promise.all([
        kubectl(realConfig, args, options),
        kubectl(simConfig, args, options),
      ]);
      const a = shown(step, real);
      const b = shown(step, sim);
      if (a.code !== 0) refused.push(step.args.join(" "));
      if (a.code !== b.code || a.text !== b.text)
        differences.push(
          `kubectl ${step.args.join(" ")}\n  real (${a.code}): ${a.text}${real.stderr}\n  sim  (${b.code}): ${b.text}${sim.stderr}`,
        );
    }
    expect(STEPS.length).toBeGreaterThanOrEqual(40);
    expect(differences).toEqual([]);
    // Every command works on the real API server except those meant to fail.
    expect(refused).toEqual([
      `-n ${NS} create deployment web --image=registry.example.com/web:1`,
      `-n ${NS} exec shell -- ls`,
      `-n ${NS} port-forward pod/shell 18099:80`,
      `-n ${NS} get pod missing`,
    ]);
  });

  it("shows the same columns for Tables of at least five kinds, in JSON", async () => {
    const accept = "application/json;as=Table;v=v1;g=meta.k8s.io";
    const paths = [
      `/api/v1/namespaces/${NS}/pods`,
      `/api/v1/namespaces/${NS}/services`,
      `/api/v1/namespaces/${NS}/configmaps`,
      `/apis/batch/v1/namespaces/${NS}/jobs`,
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`,
      "/api/v1/nodes",
      `/api/v1/namespaces/${NS}/events`,
    ];
    const columns = async (config: string, path: string) => {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(config);
      const init = await kc.applyToFetchOptions({ headers: { accept } } as never);
      const response = await fetch(`${kc.getCurrentCluster()?.server}${path}`, init as never);
      const table = (await response.json()) as {
        kind: string;
        columnDefinitions: { name: string; type: string; priority: number }[];
      };
      return {
        kind: table.kind,
        columns: table.columnDefinitions.map((c) => `${c.name}:${c.type}:${c.priority}`),
      };
    };
    for (const path of paths)
      expect([path, await columns(simConfig, path)]).toEqual([path, await columns(realConfig, path)]);
  });

  it("takes and gives protobuf as the real API server does, for six kinds", async () => {
    const objects: JsonMap[] = [
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "pb-config", namespace: NS },
        data: { a: "1" },
      },
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "pb-secret", namespace: NS },
        type: "Opaque",
        data: { a: "MQ==" },
      },
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "pb-robot", namespace: NS } },
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "pb-service", namespace: NS },
        spec: { selector: { app: "pb" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "pb-role", namespace: NS },
        rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
      },
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "pb-deployment", namespace: NS, labels: { app: "pb" } },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: "pb" } },
          template: {
            metadata: { labels: { app: "pb" } },
            spec: {
              containers: [
                {
                  name: "main",
                  image: "registry.example.com/pb:1",
                  ports: [{ name: "http", containerPort: 8080 }],
                  resources: { requests: { cpu: "100m" } },
                },
              ],
            },
          },
        },
      },
    ];
    for (const object of objects) {
      const real = await createInProtobuf(realConfig, object);
      const sim = await createInProtobuf(simConfig, object);
      expect([object.kind, normalized(sim)]).toEqual([object.kind, normalized(real)]);
    }
  });

  it("records the same events for five kinds: Deployment, ReplicaSet, Pod, Job, StatefulSet", async () => {
    const statefulSet = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "db", namespace: NS },
      spec: {
        replicas: 1,
        serviceName: "db",
        selector: { matchLabels: { app: "db" } },
        template: {
          metadata: { labels: { app: "db" } },
          spec: { containers: [{ name: "db", image: "registry.example.com/db:1" }] },
        },
      },
    };
    const events = async (config: string) => {
      await kubectl(
        config,
        n("create", "deployment", "ev", "--image=registry.example.com/ev:1", "--replicas=1"),
      );
      await kubectl(config, n("create", "job", "ev-job", "--image=registry.example.com/job:1"));
      writeFileSync(join(planes.runDir, "db.json"), JSON.stringify(statefulSet));
      await kubectl(config, n("create", "-f", join(planes.runDir, "db.json")));
      await kubectl(config, n("rollout", "status", "statefulset/db", "--timeout=120s"), {
        timeoutMs: 150_000,
      });
      await kubectl(config, n("wait", "--for=condition=complete", "job/ev-job", "--timeout=120s"), {
        timeoutMs: 150_000,
      });
      await kubectl(config, n("rollout", "status", "deployment/ev", "--timeout=120s"), {
        timeoutMs: 150_000,
      });
      const listed = await kubectl(config, n("get", "events", "-o", "json"));
      const items = (JSON.parse(listed.stdout) as { items: JsonMap[] }).items;
      return [
        ...new Set(
          items
            .filter((e) => /^(ev|ev-job|db)(-|$)/.test(String(asMap(e.involvedObject).name)))
            .map(
              (e) =>
                `${String(asMap(e.involvedObject).kind)} ${String(e.type)} ${String(e.reason)}: ${generic(String(e.message))}`,
            ),
        ),
      ].sort();
    };
    const [real, sim] = await Promise.all([events(realConfig), events(simConfig)]);
    // The real tier's kubelets are fakes that record nothing: the kubelet's events are the simulator's alone.
    const withoutKubelet = sim.filter(
      (e) => !/^Pod Normal (Pulling|Pulled|Created|Started|Killing):/.test(e),
    );
    expect(withoutKubelet).toEqual(real);
    expect(new Set(real.map((e) => e.split(" ")[0]))).toEqual(
      new Set(["Deployment", "ReplicaSet", "Pod", "Job", "StatefulSet"]),
    );
  });

  it("speaks protobuf and explains with what the repository's scripts generate from the pinned release", () => {
    // Reproducible: the committed descriptor is byte for byte what the script writes from the Go modules.
    const generated = join(planes.runDir, "protobuf.json");
    const script = fileURLToPath(new URL("../../scripts/kubernetes-protos.mjs", import.meta.url));
    execFileSync("node", [script, generated], { stdio: "ignore" });
    const committed = fileURLToPath(new URL("../../schema/kubernetes/protobuf-v1.36.json", import.meta.url));
    expect(readFileSync(generated, "utf8")).toBe(readFileSync(committed, "utf8"));
    const described = join(planes.runDir, "descriptions.json");
    const descriptionsScript = fileURLToPath(
      new URL("../../scripts/kubernetes-descriptions.mjs", import.meta.url),
    );
    execFileSync("node", [descriptionsScript, described], { stdio: "ignore" });
    const shipped = fileURLToPath(
      new URL("../../schema/kubernetes/descriptions-v1.36.json", import.meta.url),
    );
    expect(readFileSync(described, "utf8")).toBe(readFileSync(shipped, "utf8"));
  });

  it("serves logs and metrics only where a kubelet and a metrics API answer: the simulated member", async () => {
    const simLogs = await kubectl(simConfig, n("logs", "shell"));
    expect(simLogs).toMatchObject({ code: 0, stdout: expect.stringMatching(/container shell started/) });
    const following = await kubectl(simConfig, n("logs", "-f", "shell"), { timeoutMs: 2000 });
    expect(following.stdout).toMatch(/container shell started/);
    expect((await kubectl(simConfig, ["top", "nodes"])).code).toBe(0);
    expect(await kubectl(simConfig, n("top", "pods"))).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/),
    });
    // The real tier: no kubelet serves the fake nodes' logs, no metrics-server is installed.
    expect((await kubectl(realConfig, n("logs", "shell"), { timeoutMs: 30_000 })).code).not.toBe(0);
    expect(await kubectl(realConfig, ["top", "nodes"])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/Metrics API not available/),
    });
  });
});

// A request as a client sends it, to the real API server or the simulated member: status, warnings, body.
async function raw(
  config: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<{ status: number; warning: string | null; body: JsonMap }> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(config);
  const options = (await kc.applyToFetchOptions({} as never)) as { headers?: Record<string, string> };
  const response = await fetch(`${kc.getCurrentCluster()?.server}${path}`, {
    ...(options as object),
    method,
    headers: { ...options.headers, "content-type": contentType, accept: "application/json" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  } as never);
  return {
    status: response.status,
    warning: response.headers.get("warning"),
    body: (await response.json()) as JsonMap,
  };
}

describe("dry runs and field validation against a real API server and a simulated member", () => {
  const DRY = "dryrun";
  const CM = `/api/v1/namespaces/${DRY}/configmaps`;
  const APPLY = "application/apply-patch+yaml";
  const configMap = (name: string, data: Record<string, string>, extra: JsonMap = {}) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, ...extra },
    data,
  });
  const unknown = (name: string) => ({ ...configMap(name, { v: "1" }, { bogus: 1 }), extra: { a: 1 } });

  const GIZMOS = `/apis/parity.example.com/v1/namespaces/${DRY}/gizmos`;
  const gizmo = (name: string) => ({
    apiVersion: "parity.example.com/v1",
    kind: "Gizmo",
    metadata: { name, bogus: 1 },
    spec: { size: 1, color: "red", tags: [{ k: "a", v: "b" }], labels: { x: "y" }, free: { deep: 1 } },
    extra: 1,
  });
  const GIZMO_CRD = customResourceDefinition({
    group: "parity.example.com",
    kind: "Gizmo",
    plural: "gizmos",
    singular: "gizmo",
    listKind: "GizmoList",
    schema: declaredSpec(),
  });

  // Each request in turn on both; what the first part of each tuple makes is the state the next reads.
  const REQUESTS: readonly (readonly [string, string, unknown?, string?])[] = [
    ["POST", "/api/v1/namespaces", { metadata: { name: DRY } }],
    ["POST", `${CM}?fieldManager=probe`, configMap("c", { v: "1" }, { labels: { tier: "tmp" } })],
    ["POST", `${CM}`, configMap("held", { v: "1" }, { finalizers: ["example.com/hold"] })],
    ["POST", `${CM}?dryRun=foo`, configMap("c2", { v: "1" })],
    ["POST", `${CM}?dryRun=`, configMap("c2", { v: "1" })],
    ["POST", `${CM}?dryRun=All&dryRun=foo`, configMap("c2", { v: "1" })],
    ["POST", `${CM}?dryRun=All&fieldManager=probe`, configMap("c2", { v: "1" }, { generateName: "g-" })],
    ["POST", `${CM}?dryRun=All`, configMap("c", { v: "1" })],
    ["PUT", `${CM}/c?dryRun=All&fieldManager=probe`, configMap("c", { v: "2" })],
    ["PUT", `${CM}/c?dryRun=bad`, configMap("c", { v: "2" })],
    ["PATCH", `${CM}/c?dryRun=All&fieldManager=other`, { data: { v: "3" } }, MERGE],
    ["PATCH", `${CM}/c?dryRun=bad`, { data: { v: "3" } }, MERGE],
    ["PATCH", `${CM}/c?dryRun=All&fieldManager=ssa`, JSON.stringify(configMap("c", { v: "4" })), APPLY],
    [
      "PATCH",
      `${CM}/c?dryRun=All&fieldManager=ssa&force=true`,
      JSON.stringify(configMap("c", { v: "4" })),
      APPLY,
    ],
    [
      "PATCH",
      `${CM}/fresh?dryRun=All&fieldManager=ssa`,
      JSON.stringify(configMap("fresh", { v: "4" })),
      APPLY,
    ],
    ["DELETE", `${CM}/c?dryRun=All`],
    ["DELETE", `${CM}/c`, { kind: "DeleteOptions", apiVersion: "v1", dryRun: ["Nope"] }],
    ["DELETE", `${CM}/held?dryRun=All`],
    ["DELETE", `${CM}/none?dryRun=All`],
    ["DELETE", `${CM}?dryRun=All&labelSelector=tier%3Dtmp`],
    ["POST", `${CM}?fieldValidation=Strict`, unknown("u1")],
    ["POST", `${CM}?fieldValidation=Warn&dryRun=All`, unknown("u2")],
    ["POST", `${CM}?dryRun=All`, unknown("u3")],
    ["POST", `${CM}?fieldValidation=Ignore&dryRun=All`, unknown("u4")],
    ["POST", `${CM}?fieldValidation=Nope`, unknown("u5")],
    [
      "POST",
      `${CM}?fieldValidation=Strict&dryRun=All`,
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"data":{"v":"1","v":"2"}}',
    ],
    [
      "POST",
      `${CM}?dryRun=All`,
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"data":{"v":"1","v":"2"}}',
    ],
    ["PUT", `${CM}/c?fieldValidation=Strict&dryRun=All`, unknown("c")],
    [
      "POST",
      `/apis/apps/v1/namespaces/${DRY}/deployments?fieldManager=probe`,
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "d" },
        spec: {
          replicas: 0,
          selector: { matchLabels: { a: "b" } },
          template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "x" }] } },
        },
      },
    ],
    [
      "PATCH",
      `/apis/apps/v1/namespaces/${DRY}/deployments/d?dryRun=All&fieldValidation=Strict`,
      { spec: { replicaz: 3 } },
      "application/strategic-merge-patch+json",
    ],
    [
      "PATCH",
      `/apis/apps/v1/namespaces/${DRY}/deployments/d?dryRun=All`,
      { spec: { replicaz: 3 } },
      "application/strategic-merge-patch+json",
    ],
    [
      "PATCH",
      `/apis/apps/v1/namespaces/${DRY}/deployments/d/scale?dryRun=All`,
      { spec: { replicas: 5 } },
      MERGE,
    ],
    // A custom resource, pruned by its CRD's structural schema (the CRD is made before these).
    ["POST", `${GIZMOS}?fieldValidation=Strict`, gizmo("g1")],
    ["POST", `${GIZMOS}?dryRun=All`, gizmo("g2")],
    ["POST", `${GIZMOS}?fieldValidation=Ignore`, gizmo("g3")],
    // One undeclared field: with several, a real server names one or all of them, as its walk goes.
    [
      "PATCH",
      `${GIZMOS}/g4?fieldManager=x&dryRun=All`,
      JSON.stringify({
        ...gizmo("g4"),
        metadata: { name: "g4" },
        spec: { size: 1, color: "red" },
        extra: undefined,
      }),
      APPLY,
    ],
    ["DELETE", `${GIZMOS}/g3?dryRun=All`],
  ];

  // kubectl's dry-run commands, on objects made in a namespace of their own: the same exit codes and
  // output (a diff's temporary directories and times made generic), and on the simulated member
  // nothing changed afterwards — no object, no watch event, no Event.
  it("runs kubectl diff and the --dry-run=server commands alike, and the simulated member is left as it was", async () => {
    const KD = "kubectl-dry";
    const file = (name: string, text: string) => {
      const path = join(planes.runDir, name);
      writeFileSync(path, text);
      return path;
    };
    const settings = (mode: string, extra = "") =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${KD}\ndata:\n  mode: ${mode}\n${extra}`;
    const unchanged = file("dry-unchanged.yaml", settings("fast"));
    const changed = file("dry-changed.yaml", settings("slow"));
    const fresh = file("dry-fresh.yaml", settings("fast").replace("name: settings", "name: fresh"));
    const undeclared = file(
      "dry-undeclared.yaml",
      settings("fast", "extra: {a: 1}\n").replace("name: settings", "name: odd"),
    );
    for (const config of [realConfig, simConfig]) {
      expect((await kubectl(config, ["create", "namespace", KD])).code).toBe(0);
      expect((await kubectl(config, ["apply", "--server-side", "-f", unchanged])).code).toBe(0);
      expect(
        (
          await kubectl(config, [
            "-n",
            KD,
            "create",
            "deployment",
            "api",
            "--image=registry.example.com/api:1",
            "--replicas=1",
          ])
        ).code,
      ).toBe(0);
      expect(
        (
          await kubectl(config, ["-n", KD, "rollout", "status", "deployment/api", "--timeout=120s"], {
            timeoutMs: 150_000,
          })
        ).code,
      ).toBe(0);
    }
    const k = (...args: string[]) => ["-n", KD, ...args];
    const steps: readonly (readonly string[])[] = [
      ["diff", "-f", changed],
      ["diff", "-f", unchanged],
      ["diff", "--server-side", "-f", changed],
      ["diff", "--server-side", "-f", fresh],
      ["apply", "--server-side", "--dry-run=server", "-f", changed],
      ["apply", "--server-side", "--dry-run=server", "-f", fresh],
      ["apply", "--dry-run=server", "-f", changed],
      ["create", "--dry-run=server", "-f", fresh],
      ["create", "--dry-run=server", "-f", unchanged],
      ["create", "--dry-run=server", "-f", undeclared],
      ["create", "--dry-run=server", "--validate=warn", "-f", undeclared],
      ["replace", "--dry-run=server", "-f", changed],
      k("create", "configmap", "extra", "--from-literal=a=1", "--dry-run=server"),
      ["create", "namespace", "ghost", "--dry-run=server"],
      k("delete", "configmap", "settings", "--dry-run=server"),
      k("delete", "deployment", "api", "--dry-run=server"),
      ["delete", "namespace", KD, "--dry-run=server"],
      k("scale", "deployment", "api", "--replicas=3", "--dry-run=server"),
      k("label", "configmap", "settings", "tier=front", "--dry-run=server"),
      k("annotate", "configmap", "settings", "note=dry", "--dry-run=server"),
      k(
        "patch",
        "configmap",
        "settings",
        "--type=merge",
        "-p",
        '{"data":{"mode":"slow"}}',
        "--dry-run=server",
      ),
      k("set", "image", "deployment/api", "api=registry.example.com/api:2", "--dry-run=server"),
      k("create", "configmap", "extra", "--from-literal=a=1", "--dry-run=invalid"),
    ];
    const generic = (text: string) =>
      text
        .replace(/\S*\/(LIVE|MERGED)-\d+\//g, "$1/")
        .replace(/^(---|\+\+\+) (\S+).*$/gm, "$1 $2")
        .replace(/(creationTimestamp|uid|resourceVersion|time): .*$/gm, "$1: …")
        .replace(/\bmanagedFields\b[\s\S]*?(?=^\S)/gm, "");
    const watchedKinds = () => member.api.resources().filter((r) => r.namespaced || r.name === "namespaces");
    const state = () =>
      JSON.stringify(
        watchedKinds().map((r) => [r.group, r.name, member.api.store.list(r, r.namespaced ? KD : undefined)]),
      );
    const before = state();
    const heard: string[] = [];
    const watch = member.api.store.watch(Number(member.api.store.currentVersion()), (event) => {
      const metadata = asMap(event.object.metadata);
      if (metadata.namespace === KD || (event.resource.name === "namespaces" && metadata.name !== undefined))
        heard.push(`${event.type} ${event.resource.name} ${String(metadata.name)}`);
    });
    const differences: string[] = [];
    for (const args of steps) {
      const [real, sim] = await Promise.all([kubectl(realConfig, args), kubectl(simConfig, args)]);
      const a = { code: real.code, stdout: generic(real.stdout), stderr: generic(real.stderr) };
      const b = { code: sim.code, stdout: generic(sim.stdout), stderr: generic(sim.stderr) };
      if (JSON.stringify(a) !== JSON.stringify(b))
        differences.push(
          `kubectl ${args.join(" ")}\n  real: ${JSON.stringify(a)}\n  sim:  ${JSON.stringify(b)}`,
        );
    }
    watch?.stop();
    expect(differences).toEqual([]);
    expect(heard.filter((h) => !h.startsWith("MODIFIED namespaces ") || h.endsWith(` ${KD}`))).toEqual([]);
    expect(state()).toBe(before);
    // Both servers still hold what they held: a dry run changed neither.
    for (const config of [realConfig, simConfig]) {
      const got = await kubectl(config, k("get", "configmap", "settings", "-o", "jsonpath={.data.mode}"));
      expect(got.stdout).toBe("fast");
      const scaled = await kubectl(config, k("get", "deployment", "api", "-o", "jsonpath={.spec.replicas}"));
      expect(scaled.stdout).toBe("1");
      expect((await kubectl(config, ["get", "namespace", "ghost"])).code).toBe(1);
    }
  });

  it(`answers ${REQUESTS.length} dry-run and field-validation requests alike: status, warnings, body`, async () => {
    for (const config of [realConfig, simConfig]) {
      expect(
        (await raw(config, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", GIZMO_CRD))
          .status,
      ).toBe(201);
      // A real server serves a new resource a moment after its CRD is established.
      await until(
        async () =>
          (await raw(config, "GET", `/apis/parity.example.com/v1/gizmos`)).status === 200 ? true : undefined,
        30_000,
      );
    }
    const differences: string[] = [];
    for (const [method, path, body, type] of REQUESTS) {
      const real = await raw(realConfig, method, path, body, type);
      const sim = await raw(simConfig, method, path, body, type);
      const a = { status: real.status, warning: real.warning, body: comparableAnswer(real.body) };
      const b = { status: sim.status, warning: sim.warning, body: comparableAnswer(sim.body) };
      if (JSON.stringify(a) !== JSON.stringify(b))
        differences.push(`${method} ${path}\n  real: ${JSON.stringify(a)}\n  sim:  ${JSON.stringify(b)}`);
      // A dry run takes no resourceVersion: a new object has none, a changed one keeps the stored one.
      if (path.includes("dryRun=All") && real.status < 300 && real.body.kind !== "Status") {
        const version = (answer: JsonMap) => asMap(answer.metadata).resourceVersion;
        expect([path, version(sim.body) === undefined]).toEqual([path, version(real.body) === undefined]);
      }
    }
    expect(differences).toEqual([]);
  });
});

// A custom resource's writes as its CRD's schema admits them: defaults filled in, every keyword's
// finding in the real server's words. The real server's answers are recorded in
// test/golden/crd-schema-answers.json (written anew with GITFLEET_RECORD_GOLDEN=1), which the first
// tier holds the simulated member to without a real server.
describe("custom resources defaulted and validated by their CRD's schema, on a real API server and a simulated member", () => {
  const GOLDEN = fileURLToPath(new URL("../golden/crd-schema-answers.json", import.meta.url));

  it(`answers ${WIDGET_REQUESTS.length} writes alike, and as recorded`, async () => {
    for (const config of [realConfig, simConfig]) {
      expect(
        (await raw(config, "POST", "/api/v1/namespaces", { metadata: { name: WIDGET_NAMESPACE } })).status,
      ).toBe(201);
      expect(
        (await raw(config, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", WIDGET_CRD))
          .status,
      ).toBe(201);
      await until(
        async () =>
          (await raw(config, "GET", "/apis/parity.example.com/v1/widgets")).status === 200 ? true : undefined,
        30_000,
      );
    }
    const differences: string[] = [];
    const answers: Record<string, unknown> = {};
    for (const request of WIDGET_REQUESTS) {
      const [real, sim] = await Promise.all(
        [realConfig, simConfig].map((config) =>
          sendWidgetRequest((...args) => raw(config, ...args), request),
        ),
      );
      const a = { status: real?.status, body: comparableAnswer(real?.body ?? {}) };
      const b = { status: sim?.status, body: comparableAnswer(sim?.body ?? {}) };
      answers[request.name] = a;
      if (JSON.stringify(a) !== JSON.stringify(b))
        differences.push(`${request.name}\n  real: ${JSON.stringify(a)}\n  sim:  ${JSON.stringify(b)}`);
    }
    if (process.env.GITFLEET_RECORD_GOLDEN === "1")
      writeFileSync(GOLDEN, `${JSON.stringify(answers, null, 1)}\n`);
    expect(differences).toEqual([]);
    expect(answers).toEqual(JSON.parse(readFileSync(GOLDEN, "utf8")));
  });

  it("ratchets a value the CRD's narrowed schema refuses but the object already held, as the real server does", async () => {
    for (const config of [realConfig, simConfig]) {
      expect((await raw(config, "POST", WIDGETS, widget("ratchet", { size: 9 }))).status).toBe(201);
      expect(
        (await raw(config, "PATCH", WIDGET_CRD_PATH, NARROWER_SIZE, "application/json-patch+json")).status,
      ).toBe(200);
      // A real server serves the new schema a moment later: once a new object of size 9 is refused.
      await until(
        async () =>
          (await raw(config, "POST", `${WIDGETS}?dryRun=All`, widget("probe", { size: 9 }))).status === 422
            ? true
            : undefined,
        30_000,
      );
    }
    const answers: unknown[][] = [];
    for (const patch of [{ spec: { color: "blue" } }, { spec: { size: 10 } }, { spec: { size: 8 } }])
      answers.push(
        await Promise.all(
          [realConfig, simConfig].map(async (config) => {
            const answer = await raw(config, "PATCH", `${WIDGETS}/ratchet`, patch, MERGE);
            return { status: answer.status, body: comparableAnswer(answer.body) };
          }),
        ),
      );
    for (const [real, sim] of answers) expect(sim).toEqual(real);
    expect(answers.map(([real]) => (real as { status: number }).status)).toEqual([200, 422, 200]);
  });
});
