import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { MemberApiError, MemberClient } from "../../src/kube/member-client.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { gitfleetAsync as cli } from "../helpers/cli.js";
import { createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { statusFile } from "../helpers/sync-fleet.js";
import { type ControlPlanes, startControlPlanes } from "./cluster/control-plane.js";

/**
 * `gitfleet join` against a real kube-apiserver (RBAC authorization): the admin kubeconfig is used
 * once; then gitfleet syncs the member with only the token and the RBAC join made — which the real
 * server enforces: a kind the fleet did not apply when it joined is refused until it joins again.
 */

const BUILD = fileURLToPath(new URL("./cluster/build.sh", import.meta.url));
const CLUSTER = "joined";

let planes: ControlPlanes;
let admin: MemberClient;
let work: { dir: string; cleanup: () => void };

beforeAll(async () => {
  const binDir = execFileSync("bash", [BUILD], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;
  planes = await startControlPlanes({ binDir, names: [CLUSTER], controllers: false });
  const config = new k8s.KubeConfig();
  config.loadFromFile(planes.kubeconfig);
  admin = new MemberClient(CLUSTER, config, { retries: 2 });
  // Nodes as a kubelet registers them (no kubelet runs: join reads only their labels).
  for (const name of ["node-a", "node-b"])
    await admin.apply(
      {
        apiVersion: "v1",
        kind: "Node",
        metadata: {
          name,
          labels: {
            "topology.kubernetes.io/region": "eu-north",
            "topology.kubernetes.io/zone": "eu-north-1a",
          },
        },
      },
      true,
      "kubelet",
    );
  work = tempDir("gitfleet-join-e2e-");
  mkdirSync(join(work.dir, "fleet"));
  createRepo(
    fleet(),
    fileTreeFromText({
      "apps/web/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n",
      "apps/web/config.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: hello\n",
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n",
    }),
  );
  gitIn(fleet(), "config", "user.name", "Pat Platform");
  gitIn(fleet(), "config", "user.email", "pat@example.com");
}, 900_000);

afterAll(async () => {
  await planes?.stop();
  work?.cleanup();
});

const fleet = () => join(work.dir, "fleet");
const members = () => join(work.dir, "members");

const join_ = () =>
  cli([
    "join",
    CLUSTER,
    "--repo",
    fleet(),
    "--admin-kubeconfig",
    planes.kubeconfig,
    "--context",
    CLUSTER,
    "--kubeconfig-dir",
    members(),
  ]);

const reconcile = () =>
  cli(["reconcile", "--repo", fleet(), "--once", "--kubeconfig-dir", members()], {
    env: { KUBECONFIG: "/nonexistent" },
  });

function appStatus(): JsonMap {
  return statusFile(fleet(), appStatusPath("web"));
}

describe("gitfleet join against a real API server", () => {
  it("syncs with only the RBAC it made, which the server enforces", async () => {
    const joined = await join_();
    expect(joined.code, joined.stderr).toBe(0);
    // The Cluster's region and zone come from the nodes' topology labels.
    expect(parse(gitIn(fleet(), "show", `HEAD:clusters/${CLUSTER}.yaml`)).spec).toEqual({
      region: "eu-north",
      zone: "eu-north-1a",
      connection: { mode: "push", kubeconfigFile: `${CLUSTER}.yaml` },
    });

    const synced = await reconcile();
    expect(synced.code, synced.stdout + synced.stderr).toBe(0);
    const config = await admin.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "shop", name: "web" });
    expect(asMap(config?.data).greeting).toBe("hello");
    expect(asMap(asMap(config?.metadata).labels)["app.kubernetes.io/managed-by"]).toBe("gitfleet");

    // The token is a real JWT: the status branch records when it stops working (90 days, unless capped).
    const credential = asMap(
      asMap(statusFile(fleet(), `status/clusters/${CLUSTER}.yaml`).observed).credential,
    );
    expect(credential.kind).toBe("token");
    const days = (Date.parse(String(credential.notAfter)) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(14);
    expect(days).toBeLessThanOrEqual(90);
    expect(credential.expiring).toBeUndefined();

    // Least privilege: the token reads no Secret and writes no kind the fleet does not apply.
    const own = new k8s.KubeConfig();
    own.loadFromFile(join(members(), `${CLUSTER}.yaml`));
    const gitfleet = new MemberClient(CLUSTER, own, { retries: 0 });
    const denied = await gitfleet
      .raw("GET", "/api/v1/namespaces/kube-system/secrets")
      .then(() => 200)
      .catch((error: unknown) => (error instanceof MemberApiError ? error.code : 0));
    expect(denied).toBe(403);

    // A kind outside the RBAC join made: the real server refuses the sync of it…
    writeFileSync(
      join(fleet(), "apps/web/account.yaml"),
      "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: web\n",
    );
    gitIn(fleet(), "add", "-A");
    gitIn(fleet(), "commit", "-qm", "web gets a ServiceAccount");
    await reconcile();
    expect(JSON.stringify(appStatus())).toMatch(/serviceaccounts.*forbidden|forbidden.*serviceaccounts/i);
    expect(
      await admin.get({ apiVersion: "v1", kind: "ServiceAccount", namespace: "shop", name: "web" }),
    ).toBeUndefined();

    // …until the cluster is joined again: its RBAC follows what the fleet applies now.
    const again = await join_();
    expect(again.code, again.stderr).toBe(0);
    await reconcile();
    expect(
      await admin.get({ apiVersion: "v1", kind: "ServiceAccount", namespace: "shop", name: "web" }),
    ).toBeDefined();
    expect(JSON.stringify(appStatus())).not.toMatch(/forbidden/i);
  }, 180_000);
});
