import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * `gitfleet plan` between two commits of a real Git repository (made with the git CLI), compared
 * byte for byte with reviewed golden files for the changes people make most.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
let repo: string;

function sh(args: string[]): void {
  execFileSync("git", ["-c", "user.name=Plan Test", "-c", "user.email=plan@example.com", ...args], {
    cwd: repo,
    stdio: "ignore",
  });
}

function edit(path: string, change: (text: string) => string): void {
  const file = join(repo, path);
  writeFileSync(file, change(readFileSync(file, "utf8")));
}

function plan(head: string, format = "text", base = "main") {
  const result = spawnSync(
    process.execPath,
    [
      join(root, "bin/gitfleet.js"),
      "plan",
      "--repo",
      repo,
      "--base",
      base,
      "--head",
      head,
      "--format",
      format,
    ],
    { encoding: "utf8" },
  );
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function gitfleet(...args: string[]) {
  return spawnSync(process.execPath, [join(root, "bin/gitfleet.js"), ...args], { encoding: "utf8" });
}

// Each scenario is a branch off main with one commit.
const SCENARIOS: Record<string, () => void> = {
  "weight-change": () =>
    edit("placements/web.yaml", (t) => t.replace("          weight: 4", "          weight: 2")),
  "cluster-cordoned": () =>
    edit("clusters/aws-use1.yaml", (t) =>
      t.replace("  zone: us-east-1a\n", "  zone: us-east-1a\n  unschedulable: true\n"),
    ),
  "image-override": () =>
    edit("overrides/image-registry.yaml", (t) =>
      t.replace("ecr-mirror.us-east-1.example.com", "ecr-mirror.us-east-2.example.com"),
    ),
  "app-added": () => {
    mkdirSync(join(repo, "apps/docs"));
    writeFileSync(
      join(repo, "apps/docs/docs.yaml"),
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: docs\n  namespace: shop\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: docs}\n  template:\n    metadata:\n      labels: {app: docs}\n    spec:\n      containers:\n        - name: docs\n          image: ghcr.io/example-shop/docs:1.0.0\n",
    );
    writeFileSync(
      join(repo, "placements/docs.yaml"),
      "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: docs\nspec:\n  apps: [docs]\n  clusterAffinity:\n    clusterNames: [gcp-euw1]\n",
    );
  },
  // A Helm app's prod values file: the prod clusters' render changes, staging's does not.
  "helm-values-change": () =>
    edit("apps/status-page/values-prod.yaml", (t) =>
      t
        .replace("replicaCount: 3", "replicaCount: 4")
        .replace("All systems operational", "Degraded: payments"),
    ),
  // The platform app holds every cluster's namespaces: removing it is over any deletion budget.
  // (storefront-api and orders-worker depend on it: the same commit drops the dependencies, or it would not validate.)
  "platform-removed": () => {
    rmSync(join(repo, "apps/platform"), { recursive: true });
    rmSync(join(repo, "placements/platform.yaml"));
    for (const name of ["storefront-api", "orders-worker"]) {
      const app = join(repo, `apps/${name}/app.yaml`);
      writeFileSync(
        app,
        readFileSync(app, "utf8").replace(
          /(\n {2}# In each cluster[^\n]*)?\n {2}dependsOn: \[platform\]/,
          "",
        ),
      );
    }
  },
  "app-removed": () => {
    rmSync(join(repo, "apps/training"), { recursive: true });
    rmSync(join(repo, "placements/training.yaml"));
  },
  // orders-worker's overflow tiers: the plan says what each tier gets (its autoscaler removed, so
  // the template's count is the total).
  "overflow-scaled": () => {
    rmSync(join(repo, "autoscaling/orders-worker-queue.yaml"));
    edit("apps/orders-worker/deployment.yaml", (t) => t.replace("replicas: 2", "replicas: 10"));
  },
  // A fleet quota for shop: idc-east-1 gets a ResourceQuota with its static assignment.
  "quota-added": () => {
    mkdirSync(join(repo, "quotas"));
    writeFileSync(join(repo, "quotas/shop.yaml"), SHOP_QUOTA);
  },
};

// shop's workloads run 52 pods and request 17600m CPU across the fleet (storefront-api at its
// template's 8), exactly these limits; in idc-east-1 they use 8500m and 17 pods, within its assignment.
const SHOP_QUOTA =
  'apiVersion: gitfleet.io/v1alpha1\nkind: FederatedResourceQuota\nmetadata:\n  name: shop\n  namespace: shop\nspec:\n  overall: {pods: "52", requests.cpu: 17600m}\n  staticAssignments:\n    - clusterName: idc-east-1\n      hard: {pods: "20", requests.cpu: 8500m}\n';

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "gitfleet-plan-"));
  cpSync(join(root, "example-repo"), repo, { recursive: true });
  sh(["init", "-q", "-b", "main"]);
  sh(["add", "-A"]);
  sh(["commit", "-q", "-m", "example fleet"]);
  for (const [name, change] of Object.entries(SCENARIOS)) {
    sh(["checkout", "-q", "-b", name, "main"]);
    change();
    sh(["add", "-A"]);
    sh(["commit", "-q", "-m", name]);
  }
  sh(["checkout", "-q", "main"]);
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("gitfleet plan", () => {
  it.each(Object.keys(SCENARIOS))("%s (golden)", async (name) => {
    const { code, stdout, stderr } = plan(name);
    expect(stderr).toBe("");
    await expect(stdout).toMatchFileSnapshot(`../golden/plan/${name}.txt`);
    // Changes (2), or changes that delete past the deletion budget (5).
    expect(code).toBe(name === "platform-removed" ? 5 : 2);
  });

  it("refuses a change that grows a namespace past its quota, at the line that grows it (golden)", async () => {
    sh(["checkout", "-q", "-b", "quota-exceeded", "quota-added"]);
    edit("apps/web/deployment.yaml", (t) => t.replace("replicas: 12", "replicas: 15"));
    sh(["commit", "-q", "-am", "web: 15 replicas"]);
    sh(["checkout", "-q", "main"]);
    const { code, stdout, stderr } = plan("quota-exceeded", "text", "quota-added");
    await expect(`${stdout}${stderr}`.replaceAll(repo, "<repo>")).toMatchFileSnapshot(
      "../golden/plan/quota-exceeded.txt",
    );
    // An invalid head, told apart from a plan that could not run (1).
    expect(code).toBe(4);
  });

  it("renders a pull-request comment in markdown (golden)", async () => {
    const { code, stdout } = plan("cluster-cordoned", "markdown");
    await expect(stdout).toMatchFileSnapshot("../golden/plan/cluster-cordoned.md");
    expect(code).toBe(2);
  });

  it("shows the deletion budget's verdict, with the token a reviewed commit adds to allow it", () => {
    const { stdout } = plan("platform-removed", "json");
    const parsed = JSON.parse(stdout) as {
      clusters: { cluster: string; pruneBlocked?: { token: string; reasons: string[] } }[];
    };
    const blocked = parsed.clusters.filter((c) => c.pruneBlocked);
    expect(blocked.length).toBeGreaterThan(0);
    for (const c of blocked) {
      expect(c.pruneBlocked?.token).toMatch(/^prune-[0-9a-f]{12}$/);
      expect(c.pruneBlocked?.reasons.join("; ")).toMatch(/would delete .*Namespace/);
    }
    expect(plan("platform-removed", "markdown").stdout).toContain("⛔ prune blocked");
    // Over the budget, told apart from changes the sync applies (2).
    expect(plan("platform-removed").code).toBe(5);
  });

  it("prints machine-readable JSON", () => {
    const { stdout } = plan("weight-change", "json");
    const parsed = JSON.parse(stdout) as {
      changed: boolean;
      distributions: { workload: string; before: object; after: object }[];
    };
    expect(parsed.changed).toBe(true);
    expect(parsed.distributions.map((d) => d.workload)).toEqual(["Deployment shop/web"]);
  });

  it("exits 0 and says so when nothing changes", () => {
    const { code, stdout } = plan("main");
    expect(stdout).toBe("No changes: every cluster gets exactly what it gets now.\n");
    expect(code).toBe(0);
  });

  it("exits 1 on an unknown revision", () => {
    const { code, stderr } = plan("no-such-branch");
    expect(stderr).toContain('unknown revision "no-such-branch"');
    expect(code).toBe(1);
  });
});

describe("gitfleet plan on top of the status branch", () => {
  it("plans a drain from what the clusters run: a cordoned cluster's replicas move, and stay until the new ones are ready", () => {
    // aws-use1 is cordoned, then drained by the next pull request.
    sh(["checkout", "-q", "-b", "cordon", "main"]);
    edit("clusters/aws-use1.yaml", (t) =>
      t.replace("  zone: us-east-1a\n", "  zone: us-east-1a\n  unschedulable: true\n"),
    );
    sh(["commit", "-q", "-am", "cordon aws-use1"]);
    sh(["checkout", "-q", "-b", "drain", "cordon"]);
    edit("clusters/aws-use1.yaml", (t) =>
      t.replace("  unschedulable: true\n", "  unschedulable: true\n  drain: true\n"),
    );
    sh(["commit", "-q", "-am", "drain aws-use1"]);
    sh(["checkout", "-q", "main"]);
    // Without a status branch the base is rendered afresh: a cordoned cluster with no replicas, nothing to move.
    expect(plan("drain", "text", "cordon").stdout).not.toContain("web (app web)");
    // The controller reconciled main, then the cordon: aws-use1 kept web's replicas.
    for (const branch of ["main", "cordon"])
      expect(
        gitfleet(
          "reconcile",
          "--repo",
          repo,
          "--branch",
          branch,
          "--once",
          "--no-sync",
          "--log-level",
          "error",
        ).status,
      ).toBe(0);
    const { stdout, code } = plan("drain", "text", "cordon");
    expect(code).toBe(2);
    expect(stdout).toMatch(/Deployment shop\/web \(app web\): aws-use1 \d+ → 0/);
    expect(stdout).toMatch(
      /! Deployment shop\/web no longer placed here: untolerated taint \{gitfleet.io\/drain:NoExecute\}; its \d+ replicas stay until the new ones are ready elsewhere \(purgeMode Gracefully\)/,
    );
  });
});
