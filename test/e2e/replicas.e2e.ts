import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { createRepo, tempDir } from "../helpers/git-repo.js";
import { helm, helmBinary } from "../helpers/helm.js";
import { haScenario } from "../helpers/replicas.js";
import { shardScenario } from "../helpers/shards.js";
import { type ControlPlanes, startControlPlanes } from "./cluster/control-plane.js";

/**
 * gitfleet installed as its users install it, on a real API server as the management cluster: the
 * chart's plain manifests (deploy/gitfleet.yaml) applied and validated by the server, then three
 * `gitfleet run --leader-elect` processes (pods cannot run here) with the chart's flags and the
 * chart's ServiceAccount's token — so its Role is exactly what the election needs — through one
 * leader, a SIGKILL and a takeover, a relayed push, and a SIGSTOP'd leader fenced.
 */
const BUILD = fileURLToPath(new URL("./cluster/build.sh", import.meta.url));
const MANIFESTS = fileURLToPath(new URL("../../deploy/gitfleet.yaml", import.meta.url));
const CHART = fileURLToPath(new URL("../../charts/gitfleet", import.meta.url));
const AGENT_CHART = fileURLToPath(new URL("../../charts/gitfleet-agent", import.meta.url));
const PROMETHEUS_BUILD = fileURLToPath(new URL("./prometheus/build.sh", import.meta.url));
const NAMESPACE = "gitfleet-system";
const run = promisify(execFile);

let planes: ControlPlanes;
let admin: MemberClient;
let work: { dir: string; cleanup: () => void };

const kubectl = (kubeconfig: string, ...args: string[]) =>
  run("kubectl", ["--kubeconfig", kubeconfig, "--context", "management", ...args], { encoding: "utf8" });

beforeAll(async () => {
  const binDir = execFileSync("bash", [BUILD], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;
  planes = await startControlPlanes({ binDir, names: ["management"], controllers: false });
  const config = new KubeConfig();
  config.loadFromFile(planes.kubeconfig);
  config.setCurrentContext("management");
  admin = new MemberClient("management", config, { timeoutMs: 10_000 });
  work = tempDir("gitfleet-e2e-replicas-");
});

afterAll(async () => {
  await planes?.stop();
  work?.cleanup();
});

// A kubeconfig for a chart's ServiceAccount: the server's entry, and a token the API server issued for it.
async function serviceAccountKubeconfig(account = "gitfleet"): Promise<string> {
  const answer = asMap(
    await admin.raw("POST", `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${account}/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { expirationSeconds: 3600 },
    }),
  );
  const token = String(asMap(answer.status).token);
  const adminConfig = JSON.parse(readFileSync(planes.kubeconfig, "utf8")) as {
    clusters: { name: string }[];
  };
  const cluster = adminConfig.clusters.find((c) => c.name === "management");
  const file = join(work.dir, `${account}-sa.kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [cluster],
      users: [{ name: "gitfleet", user: { token } }],
      contexts: [{ name: "management", context: { cluster: "management", user: "gitfleet" } }],
      "current-context": "management",
    }),
    { mode: 0o600 },
  );
  return file;
}

describe("gitfleet installed on a real management cluster", () => {
  it("the chart's manifests are accepted by the API server, strictly validated", async () => {
    // A dry run cannot create into a namespace it only pretends to make: the namespace first.
    await kubectl(planes.kubeconfig, "create", "namespace", NAMESPACE);
    // Then every object at once, as a user applies the file: the server validates each strictly
    // (unknown or duplicate fields are errors), first as a dry run, then for real.
    const dry = await kubectl(
      planes.kubeconfig,
      "apply",
      "--server-side",
      "--validate=strict",
      "--dry-run=server",
      "-f",
      MANIFESTS,
    );
    const lines = dry.stdout.split("\n").filter(Boolean);
    expect(lines).toHaveLength(7);
    expect(lines.every((line) => line.endsWith("serverside-applied (server dry run)"))).toBe(true);
    const applied = await kubectl(
      planes.kubeconfig,
      "apply",
      "--server-side",
      "--validate=strict",
      "-f",
      MANIFESTS,
    );
    for (const object of [
      "namespace/gitfleet-system",
      "serviceaccount/gitfleet",
      "role.rbac.authorization.k8s.io/gitfleet-leader-election",
      "rolebinding.rbac.authorization.k8s.io/gitfleet-leader-election",
      "service/gitfleet",
      "deployment.apps/gitfleet",
      "poddisruptionbudget.policy/gitfleet",
    ])
      expect(applied.stdout).toContain(`${object} serverside-applied`);
    // What the server stored is what the chart says (nothing dropped as unknown).
    const stored = asMap(
      await admin.raw("GET", `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/gitfleet`),
    );
    const pod = asMap(asMap(asMap(stored.spec).template).spec);
    const container = asMap(asList(pod.containers)[0]);
    expect(asMap(container.securityContext)).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(asList(container.args)).toContain("--leader-elect");
    expect(asMap(asMap(container.readinessProbe).httpGet).path).toBe("/readyz");
  });

  it("its ServiceAccount may run the election and nothing more", async () => {
    const kubeconfig = await serviceAccountKubeconfig();
    const can = async (...args: string[]) =>
      (
        await kubectl(kubeconfig, "auth", "can-i", "-n", NAMESPACE, ...args).catch(
          (error: { stdout?: string }) => ({
            stdout: String(error.stdout),
          }),
        )
      ).stdout.trim();
    expect(await can("create", "leases.coordination.k8s.io")).toBe("yes");
    expect(await can("update", "leases.coordination.k8s.io/gitfleet")).toBe("yes");
    expect(await can("patch", "leases.coordination.k8s.io/gitfleet")).toBe("yes");
    expect(await can("update", "leases.coordination.k8s.io/another")).toBe("no");
    expect(await can("get", "secrets")).toBe("no");
    expect(await can("list", "pods")).toBe("no");
    expect(await can("get", "leases.coordination.k8s.io", "-n", "kube-system")).toBe("no");
  });

  it("three replicas with the chart's flags: one leader, a kill taken over, a pause fenced", async () => {
    const kubeconfig = await serviceAccountKubeconfig();
    const repo = join(work.dir, "fleet");
    mkdirSync(repo);
    createRepo(repo, fleetFiles(BASE_SPEC));
    // The chart's arguments but those naming the pod's files and address, which the scenario gives.
    const deployment = readFileSync(MANIFESTS, "utf8");
    const chartArgs = [
      ...deployment.matchAll(/^\s+- (--(?:branch|log-level|leader-elect-lease)=\S+)$/gm),
    ].map((m) => m[1] as string);
    expect(chartArgs).toEqual(["--branch=main", "--log-level=info", "--leader-elect-lease=gitfleet"]);
    const started = Date.now();
    const { takeoverMs } = await haScenario(
      {
        repo,
        kubeconfig,
        context: "management",
        namespace: NAMESPACE,
        timings: { lease: "4s", deadline: "3s", retry: "500ms" },
        args: [...chartArgs, "--no-sync"],
      },
      4000,
    );
    console.log(
      `e2e: takeover after SIGKILL in ${takeoverMs} ms (lease 4 s); scenario ${Date.now() - started} ms`,
    );
    const lease = asMap(
      await admin.raw("GET", `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/gitfleet`),
    );
    expect(Number(asMap(lease.spec).leaseTransitions)).toBeGreaterThanOrEqual(2);
  }, 240_000);

  it("the chart's optional manifests and the agent's chart are accepted by the API server, strictly validated", async () => {
    const home = join(work.dir, "helm-home");
    mkdirSync(home, { recursive: true });
    // A dry run first, then for real, as a user applies a file: kubectl fails on any refusal.
    const apply = async (name: string, text: string) => {
      const file = join(work.dir, `${name}.yaml`);
      writeFileSync(file, text);
      const strict = ["apply", "--server-side", "--validate=strict", "-f", file];
      await kubectl(planes.kubeconfig, ...strict, "--dry-run=server");
      return (await kubectl(planes.kubeconfig, ...strict)).stdout;
    };
    // The Prometheus Operator's CRDs (from its Go module), so its kinds are validated by their schemas.
    const monitoring = execFileSync("bash", [PROMETHEUS_BUILD], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    })
      .trim()
      .split("\n")
      .pop() as string;
    await kubectl(planes.kubeconfig, "apply", "--server-side", "-f", join(monitoring, "crds"));
    for (const crd of ["prometheusrules", "servicemonitors"])
      await kubectl(
        planes.kubeconfig,
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        `crd/${crd}.monitoring.coreos.com`,
      );
    // The controller's chart with everything that is off by default.
    const optional = await helm(helmBinary(), home, [
      "template",
      "gitfleet",
      CHART,
      "--namespace",
      NAMESPACE,
      ...["repo.url=https://git.example.com/fleet.git", "networkPolicy.enabled=true", "ingress.enabled=true"]
        .concat([
          "ingress.host=fleet.example.com",
          "grafanaDashboard.enabled=true",
          "priorityClassName=system-cluster-critical",
          "serviceMonitor.enabled=true",
          "prometheusRule.enabled=true",
        ])
        .flatMap((set) => ["--set", set]),
    ]);
    const stored = await apply("optional", optional);
    for (const object of [
      "networkpolicy.networking.k8s.io/gitfleet",
      "ingress.networking.k8s.io/gitfleet",
      "configmap/gitfleet-dashboard",
      "servicemonitor.monitoring.coreos.com/gitfleet",
      "prometheusrule.monitoring.coreos.com/gitfleet",
    ])
      expect(stored).toContain(`${object} serverside-applied`);
    // The agent's chart, as a pull-mode member installs it; its account may apply and report.
    const agent = await helm(helmBinary(), home, [
      "template",
      "agent",
      AGENT_CHART,
      "--namespace",
      NAMESPACE,
      ...["cluster=idc-west-1", "repo.url=https://git.example.com/fleet.git"].flatMap((set) => [
        "--set",
        set,
      ]),
    ]);
    expect(await apply("agent", agent)).toContain("deployment.apps/agent-gitfleet-agent serverside-applied");
    const kubeconfig = await serviceAccountKubeconfig("agent-gitfleet-agent");
    const can = async (...args: string[]) =>
      (
        await kubectl(kubeconfig, "auth", "can-i", ...args).catch((error: { stdout?: string }) => ({
          stdout: String(error.stdout),
        }))
      ).stdout.trim();
    expect(await can("create", "deployments.apps", "-n", "shop")).toBe("yes");
    expect(await can("update", "configmaps", "-n", NAMESPACE)).toBe("yes");
  });

  it("two shard holders with the chart's sharded RBAC: each member synced by one, a killed holder's shard taken over", async () => {
    // The chart with shards: 2 adds each shard's Lease to its Role; that Role replaces the installed one.
    const home = join(work.dir, "helm-home");
    mkdirSync(home, { recursive: true });
    const role = await helm(helmBinary(), home, [
      "template",
      "gitfleet",
      CHART,
      "--namespace",
      NAMESPACE,
      "--set",
      "repo.url=https://git.example.com/fleet.git",
      "--set",
      "shards=2",
      "--show-only",
      "templates/role.yaml",
    ]);
    const file = join(work.dir, "sharded-role.yaml");
    writeFileSync(file, role);
    await kubectl(planes.kubeconfig, "apply", "--server-side", "--validate=strict", "-f", file);
    const kubeconfig = await serviceAccountKubeconfig();
    const started = Date.now();
    const { takeoverMs } = await shardScenario(
      {
        dir: work.dir,
        kubeconfig,
        context: "management",
        namespace: NAMESPACE,
        timings: { lease: "4s", deadline: "3s", retry: "500ms" },
      },
      4000,
    );
    console.log(
      `e2e: shard taken over after SIGKILL in ${takeoverMs} ms (lease 4 s); scenario ${Date.now() - started} ms`,
    );
    // At the end the survivor holds one shard and the replica that came back the other, whichever
    // the survivor gave up.
    const holders = await Promise.all(
      [0, 1].map(async (shard) => {
        const path = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/gitfleet-shard-${shard}`;
        return String(asMap(asMap(await admin.raw("GET", path)).spec).holderIdentity).split("_")[0];
      }),
    );
    expect(new Set(holders).size).toBe(2);
    expect(holders).toContain("holder-c");
    expect(holders.every((holder) => ["holder-a", "holder-b", "holder-c"].includes(holder ?? ""))).toBe(true);
  }, 240_000);
});
