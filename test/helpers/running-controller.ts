import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { commitTree, createRepo, gitIn, tempDir } from "./git-repo.js";
import { spawnRun } from "./gitfleet-run.js";
import { until } from "./member.js";
import { webDeployment } from "./minimal-fleet.js";
import { mcsCrdFiles, WEB_SERVICE, WEB_SERVICE_EXPORT } from "./service-fleet.js";
import { startMembers } from "./sync-fleet.js";
import { clusterYaml, weightedPlacement } from "./two-clusters.js";

// `gitfleet run` as a real process (the command the container image runs), syncing simulated members
// that run in the test, with its HTTP endpoint on a free port: for the dashboard, API and metrics tests.

/** Probes every second; NotReady after 2 failures; replicas leave a NotReady cluster at once. */
export const FAST_FLEET_YAML = `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: dashboard
spec:
  reconcileInterval: 1s
  statusInterval: 1s
  clusterHealth:
    probeInterval: 1s
    failureThreshold: 2
    successThreshold: 2
    noExecuteAfter: 1s
`;

const cluster = (name: string, provider: string, region: string, extra = "") =>
  clusterYaml(name, { provider, region, extra });

// Divided 3:2:1; replicas leave a NotReady cluster at once.
const PLACEMENT = `${weightedPlacement("web", { east: 3, west: 2, north: 1 })}  failover:
    cluster:
      tolerationSeconds: 0
      purgeMode: Directly
`;

/**
 * Four clusters in two regions — east and north in us-east, west and lab in eu-west — and web, six
 * replicas divided 3:2:1 over the three that tolerate it: lab is tainted gpu=true and left out.
 */
export function dashboardFleet(): Record<string, string> {
  return {
    "fleet.yaml": FAST_FLEET_YAML,
    "clusters/east.yaml": cluster("east", "aws", "us-east"),
    "clusters/north.yaml": cluster("north", "idc", "us-east"),
    "clusters/west.yaml": cluster("west", "gcp", "eu-west"),
    "clusters/lab.yaml": cluster(
      "lab",
      "idc",
      "eu-west",
      '  taints:\n    - {key: gpu, value: "true", effect: NoSchedule}\n',
    ),
    "apps/web/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n",
    "apps/web/deployment.yaml": webDeployment(6, "100m"),
    "apps/web/config.yaml":
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  MODE: production\n",
    "placements/web.yaml": PLACEMENT,
  };
}

/**
 * The dashboard's fleet with two owners: fleet.yaml's platformOwners @shop/platform, and the Team web
 * (owners @shop/web) owning web, beside docs, the platform team's app.
 */
export function teamsFleet(): Record<string, string> {
  return {
    ...dashboardFleet(),
    "fleet.yaml": `${FAST_FLEET_YAML}  platformOwners: ["@shop/platform"]\n`,
    "teams/web.yaml":
      'apiVersion: gitfleet.io/v1alpha1\nkind: Team\nmetadata:\n  name: web\nspec:\n  paths: [apps/web/**, placements/web.yaml]\n  owners: ["@shop/web"]\n  namespaces: [shop]\n',
    "apps/docs/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: docs\nspec:\n  namespace: docs\n",
    "apps/docs/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: docs\ndata: {a: b}\n",
    "placements/docs.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: docs\nspec:\n  apps: [docs]\n",
  };
}

/**
 * The dashboard's fleet with web exported in the endpoints mode: its LoadBalancer address is each
 * producing cluster's entry point, and every cluster gets its EndpointSlices (docs/networking.md).
 */
export function exportingDashboardFleet(): Record<string, string> {
  return {
    ...dashboardFleet(),
    "fleet.yaml": `${FAST_FLEET_YAML}  serviceDiscovery:\n    clusterSetID: dashboard\n    mode: endpoints\n`,
    "apps/web/service.yaml": WEB_SERVICE,
    "apps/web/export.yaml": WEB_SERVICE_EXPORT,
    ...mcsCrdFiles(),
  };
}

export interface RunningController {
  /** http://127.0.0.1:port */
  readonly url: string;
  /** The fleet repo (a work tree on main). */
  readonly repo: string;
  readonly members: readonly SimulatedMember[];
  member(name: string): SimulatedMember;
  /** The controller's log records so far. */
  readonly records: Record<string, unknown>[];
  stop(): Promise<void>;
}

/** Creates the fleet repo, starts a simulated member per cluster and `gitfleet run` on a free port. */
export async function runController(
  files: Record<string, string>,
  prefix: string,
  extraArgs: readonly string[] = ["--plan-revisions", "more-web"],
): Promise<RunningController> {
  const { dir, cleanup } = tempDir(prefix);
  const repo = join(dir, "fleet");
  mkdirSync(repo);
  createRepo(repo, fileTreeFromText(files));
  const names = Object.keys(files)
    .map((path) => /^clusters\/(.+)\.yaml$/.exec(path)?.[1])
    .filter((name): name is string => name !== undefined);
  const { members, kubeconfig } = await startMembers(names, join(dir, "kubeconfig"));
  const { child, url, records } = await spawnRun(
    ["--repo", repo, "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:0", "--interval", "1s", ...extraArgs],
    { GITFLEET_WEBHOOK_SECRET: "" },
  );
  return {
    url,
    repo,
    members,
    member: (name) => members.find((m) => m.name === name) as SimulatedMember,
    records,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      child.kill("SIGKILL");
      await Promise.all(members.map((m) => m.close()));
      cleanup();
    },
  };
}

/** Waits until the status branch says the app is Healthy: every member synced it and its replicas are ready. */
export async function appHealthy(controller: RunningController, app: string, token?: string): Promise<void> {
  await until(async () => {
    const { body } = await getJson<{ apps?: { name: string; health: string }[] }>(
      `${controller.url}/api/apps`,
      token,
    );
    return body.apps?.find((a) => a.name === app)?.health === "Healthy" ? true : undefined;
  }, 30_000);
}

/** A proposed change on branch more-web (web at 9 replicas, or `replicas`), main left as it is: for plans. */
export function proposeMoreWeb(
  repo: string,
  files: Record<string, string> = dashboardFleet(),
  replicas = 9,
): void {
  // Committed on more-web itself: main never points at it, so the running controller (which polls
  // main) cannot reconcile the proposal in between.
  gitIn(repo, "checkout", "-q", "-B", "more-web", "main");
  commitTree(
    repo,
    fileTreeFromText({ ...files, "apps/web/deployment.yaml": webDeployment(replicas, "100m") }),
    `web: ${replicas} replicas`,
  );
  gitIn(repo, "checkout", "-q", "main");
}

/** GET a JSON endpoint of the controller. */
export async function getJson<T = Record<string, unknown>>(
  url: string,
  token?: string,
): Promise<{ status: number; body: T }> {
  const response = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  return { status: response.status, body: (await response.json()) as T };
}

/**
 * Two clusters, an app that is only a ConfigMap, and a Migration bringing it under gitfleet: batch
 * first (east) approved and observed for a second, batch second (west) not approved yet.
 */
export function migrationFleet(): Record<string, string> {
  return {
    "fleet.yaml": FAST_FLEET_YAML,
    "clusters/east.yaml": cluster("east", "aws", "us-east"),
    "clusters/west.yaml": cluster("west", "gcp", "eu-west"),
    "apps/legacy/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: legacy\nspec:\n  namespace: legacy\n",
    "apps/legacy/config.yaml":
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: legacy-config\ndata:\n  MODE: production\n",
    "placements/legacy.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: legacy\nspec:\n  apps: [legacy]\n  replicaScheduling:\n    type: Duplicated\n  conflictResolution: Adopt\n",
    "migrations/legacy.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Migration
metadata:
  name: legacy
spec:
  conflictResolution: Adopt
  observe: 1s
  batches:
    - name: first
      apps: [legacy]
      clusters: [east]
      approved: true
    - name: second
      apps: [legacy]
      clusters: [west]
      approved: false
`,
  };
}
