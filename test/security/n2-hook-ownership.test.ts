import { describe, expect, it } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { DEFAULT_LOAD_POLICY } from "../../src/model/load-policy.js";
import { formatProblem } from "../../src/model/problem.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";
import { clusterYaml } from "../helpers/two-clusters.js";

/**
 * N2 (security audit 2): a hook was made afresh by deleting whatever live object had its identity —
 * no ownership check, no budget, any kind. A PreSync "hook" Namespace deleted an operator's namespace
 * and everything in it; a hook ConfigMap replaced kube-system's. Now a hook replaces only an object
 * that is gitfleet's hook of the same app; anything else with its identity is a conflict reported on
 * the app, and nothing is deleted. Cluster-scoped hooks and the protected kinds (Namespace, PV, PVC,
 * CRD) are validation errors unless the operator allows the kind; `plan --kubeconfig` names a hook a
 * live object stands in the way of.
 */

const fleet = membersPerTest("gitfleet-n2-", ["east"]);
const east = () => fleet.members.find((m) => m.name === "east") as SimulatedMember;

const NAMESPACE_HOOK = `apiVersion: v1
kind: Namespace
metadata:
  name: prod-db
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: HookSucceeded
`;
const CONFIGMAP_HOOK = `apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns-conf
  namespace: kube-system
  annotations:
    argocd.argoproj.io/hook: PreSync
data:
  Corefile: attacker
`;

function files(hooks: string): Record<string, string> {
  return {
    "fleet.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: n2\n",
    "clusters/east.yaml": clusterYaml("east"),
    "apps/a/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: a\nspec:\n  namespace: shop\n",
    "apps/a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\ndata:\n  k: v\n",
    ...(hooks ? { "apps/a/hook.yaml": hooks } : {}),
    "placements/a.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: a\nspec:\n  apps: [a]\n  clusterAffinity:\n    clusterNames: [east]\n",
  };
}

// What an operator made in the member, as kubectl create makes it (its own field manager).
async function operatorCreates(path: string, body: JsonMap): Promise<string> {
  const response = await fetch(`${east().url}${path}?fieldManager=kubectl-create`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return String(asMap(((await response.json()) as JsonMap).metadata).uid);
}

const uidAt = async (path: string) => asMap((await liveObject(east(), path))?.metadata).uid;

async function operatorObjects() {
  return {
    namespace: await operatorCreates("/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "prod-db" },
    }),
    precious: await operatorCreates("/api/v1/namespaces/prod-db/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "precious" },
      data: { data: "IMPORTANT" },
    }),
    coredns: await operatorCreates("/api/v1/namespaces/kube-system/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "coredns-conf" },
      data: { Corefile: "real" },
    }),
  };
}

describe("N2: a hook replaces only gitfleet's own hook of its app", () => {
  it.each([
    ["the audit's Namespace", NAMESPACE_HOOK, "/metadata/annotations/argocd.argoproj.io~1hook", "Namespace"],
    [
      "a ClusterRole (cluster-scoped)",
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: admin\n  annotations:\n    gitfleet.io/hook: PreSync\nrules: []\n",
      "/metadata/annotations/gitfleet.io~1hook",
      "ClusterRole.rbac.authorization.k8s.io",
    ],
    [
      "a PersistentVolumeClaim (protected, namespaced)",
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  annotations:\n    helm.sh/hook: pre-install\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n",
      "/metadata/annotations/helm.sh~1hook",
      "PersistentVolumeClaim",
    ],
  ])(
    "%s as a hook is a validation error at its annotation, unless the operator allows the kind",
    (_name, hook, path, kind) => {
      const tree = fileTreeFromText(files(hook));
      const refused = loadFleet(tree);
      expect(refused.model).toBeUndefined();
      const problem = refused.problems.find((p) => p.code === "FORBIDDEN_HOOK");
      expect(problem ? formatProblem(problem) : refused.problems.map(formatProblem)).toMatch(
        new RegExp(
          `^apps/a/hook\\.yaml:\\d+:\\d+: error: ${path.replaceAll(".", "\\.")}: a .* may not be a hook: .*--allow-hook-kind ${kind.replaceAll(".", "\\.")}\\) \\[FORBIDDEN_HOOK\\]$`,
        ),
      );
      const [group = "", name = ""] = kind.includes(".")
        ? [kind.slice(kind.indexOf(".") + 1), kind.split(".")[0]]
        : ["", kind];
      const allowed = loadFleet(tree, undefined, undefined, {
        ...DEFAULT_LOAD_POLICY,
        hookKinds: new Set([`${group}/${name}`]),
      });
      expect(allowed.problems.map(formatProblem)).toEqual([]);
    },
  );

  it("a hook a live ConfigMap holds is a conflict: the operator's object keeps its uid and data, the app waits and says why", async () => {
    createRepo(fleet.dir, fileTreeFromText(files("")));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await controller.round();
    const before = await operatorObjects();
    commitTree(fleet.dir, fileTreeFromText(files(CONFIGMAP_HOOK)), "a: hook");
    for (let i = 0; i < 3; i++) await controller.round();
    const coredns = await liveObject(east(), "/api/v1/namespaces/kube-system/configmaps/coredns-conf");
    expect(asMap(coredns?.metadata).uid).toBe(before.coredns);
    expect(asMap(coredns?.data)).toEqual({ Corefile: "real" });
    const observed = asMap(asMap(statusFile(fleet.dir, appStatusPath("a")).observed).east);
    expect(String(asMap(observed.hooks)["PreSync ConfigMap kube-system/coredns-conf"])).toMatch(
      /conflict: ConfigMap kube-system\/coredns-conf exists and is not a hook gitfleet made for app a; it is left as it is/,
    );
  });

  it("with Namespace hooks allowed by the operator, an operator's Namespace still keeps its uid and contents", async () => {
    createRepo(fleet.dir, fileTreeFromText(files("")));
    const policy = { ...DEFAULT_LOAD_POLICY, hookKinds: new Set(["/Namespace"]) };
    const controller = await pushController(fleet.dir, fleet.kubeconfig, {}, { policy });
    await controller.round();
    const before = await operatorObjects();
    commitTree(fleet.dir, fileTreeFromText(files(NAMESPACE_HOOK)), "a: hook");
    for (let i = 0; i < 3; i++) await controller.round();
    expect(await uidAt("/api/v1/namespaces/prod-db")).toBe(before.namespace);
    expect(await uidAt("/api/v1/namespaces/prod-db/configmaps/precious")).toBe(before.precious);
    expect(gitIn(fleet.dir, "log", "-1", "--format=%B", "gitfleet/status")).not.toMatch(/pruned: [1-9]/);
  });

  it("a hook of its own from an earlier run is made afresh, as before", async () => {
    const job = (version: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: marker\n  annotations:\n    gitfleet.io/hook: PreSync\ndata:\n  v: "${version}"\n`;
    createRepo(fleet.dir, fileTreeFromText(files(job("1"))));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    for (let i = 0; i < 3; i++) await controller.round();
    const first = await uidAt("/api/v1/namespaces/shop/configmaps/marker");
    expect(first).toBeDefined();
    commitTree(fleet.dir, fileTreeFromText(files(job("2"))), "a: hook 2");
    for (let i = 0; i < 3; i++) await controller.round();
    const second = await liveObject(east(), "/api/v1/namespaces/shop/configmaps/marker");
    expect(asMap(second?.data).v).toBe("2");
    expect(asMap(second?.metadata).uid).not.toBe(first);
  });

  it("plan --kubeconfig names the hook a live object stands in the way of", async () => {
    createRepo(fleet.dir, fileTreeFromText(files("")));
    await operatorObjects();
    gitIn(fleet.dir, "checkout", "-q", "-b", "pr");
    commitTree(fleet.dir, fileTreeFromText(files(CONFIGMAP_HOOK)), "a: hook");
    const result = await gitfleetAsync([
      "plan",
      "--repo",
      fleet.dir,
      "--base",
      "main",
      "--head",
      "pr",
      "--kubeconfig",
      fleet.kubeconfig,
    ]);
    expect(result.stdout).toContain(
      "  ! PreSync hook ConfigMap kube-system/coredns-conf (app a) would replace a live object gitfleet did not make: the hook will not run and the app waits there (rename the hook, or remove that object)",
    );
    expect(result.stdout).toContain("  + ConfigMap kube-system/coredns-conf (PreSync hook)");
  });
});
