import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { gitfleetAsync as cli } from "../helpers/cli.js";
import { createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { liveObject, startMembers } from "../helpers/sync-fleet.js";

// `gitfleet join` against a simulated member: gitfleet's account and RBAC made there from what the
// fleet applies, a token minted, a kubeconfig of it written for the controller, the Cluster
// committed, and a sync through the new kubeconfig. (A simulated member authorizes every request;
// the second tier checks the RBAC against a real API server.)

let dir: string;
let cleanup: () => void;
let members: SimulatedMember[];
let adminKubeconfig: string;

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-join-"));
  ({ members, kubeconfig: adminKubeconfig } = await startMembers(["west"], join(dir, "admin.kubeconfig")));
  mkdirSync(join(dir, "fleet"));
  createRepo(
    join(dir, "fleet"),
    fileTreeFromText({
      "apps/web/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n",
      "apps/web/config.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: hello\n",
      "apps/web/widget.yaml": [
        "apiVersion: apiextensions.k8s.io/v1",
        "kind: CustomResourceDefinition",
        "metadata:\n  name: widgets.example.com",
        "spec:\n  group: example.com\n  scope: Namespaced",
        "  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}",
        "  versions:\n    - name: v1\n      served: true\n      storage: true",
        "      schema:\n        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}",
        "",
      ].join("\n"),
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n",
    }),
  );
  gitIn(join(dir, "fleet"), "config", "user.name", "Pat Platform");
  gitIn(join(dir, "fleet"), "config", "user.email", "pat@example.com");
});

afterEach(async () => {
  await Promise.all(members.map((m) => m.close()));
  cleanup();
});

const fleet = () => join(dir, "fleet");
const membersDir = () => join(dir, "members");

describe("gitfleet join", () => {
  it("makes gitfleet's own account and RBAC in the member, writes its kubeconfig and commits the Cluster", async () => {
    const result = await cli([
      "join",
      "west",
      "--repo",
      fleet(),
      "--admin-kubeconfig",
      adminKubeconfig,
      "--context",
      "west",
      "--kubeconfig-dir",
      membersDir(),
      "--region",
      "eu-west",
      "--label",
      "env=prod",
      "--token-expiration",
      "48h",
    ]);
    expect(result.code, result.stderr).toBe(0);
    const west = members[0] as SimulatedMember;

    // The member: a ServiceAccount, and a ClusterRole writing exactly the kinds the fleet applies.
    const account = await liveObject(west, "/api/v1/namespaces/gitfleet-system/serviceaccounts/gitfleet");
    expect(account).toBeDefined();
    const role = (await liveObject(
      west,
      "/apis/rbac.authorization.k8s.io/v1/clusterroles/gitfleet-member",
    )) as JsonMap;
    const writes = asList(role.rules)
      .map(asMap)
      .filter((r) => asList(r.verbs).includes("delete"))
      .map((r) => `${asList(r.apiGroups).join(",")}:${asList(r.resources).join(",")}`);
    expect(writes).toEqual([":configmaps", "apiextensions.k8s.io:customresourcedefinitions"]);
    expect(JSON.stringify(role.rules)).not.toContain('"secrets"');
    const binding = (await liveObject(
      west,
      "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/gitfleet-member",
    )) as JsonMap;
    expect(binding.subjects).toEqual([
      { kind: "ServiceAccount", name: "gitfleet", namespace: "gitfleet-system" },
    ]);

    // The controller's kubeconfig: the minted token, nothing of the admin's credentials, mode 0600.
    const path = join(membersDir(), "west.yaml");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const kubeconfig = parse(readFileSync(path, "utf8"));
    expect(kubeconfig["current-context"]).toBe("west");
    const claims = JSON.parse(
      Buffer.from(String(kubeconfig.users[0].user.token).split(".")[1] ?? "", "base64url").toString("utf8"),
    );
    expect(claims.sub).toBe("system:serviceaccount:gitfleet-system:gitfleet");
    expect(claims.exp - claims.iat).toBe(48 * 3600);
    expect(Object.keys(kubeconfig.users[0].user)).toEqual(["token"]);
    expect(result.stderr).toMatch(/token valid until \d{4}-\d\d-\d\dT/);

    // The fleet repo: one commit adding the Cluster, which validates.
    expect(gitIn(fleet(), "show", "--name-only", "--format=%s", "HEAD").split("\n")).toEqual([
      "Join cluster west",
      "",
      "clusters/west.yaml",
    ]);
    const cluster = parse(readFileSync(join(fleet(), "clusters/west.yaml"), "utf8"));
    expect(cluster).toEqual({
      apiVersion: "gitfleet.io/v1alpha1",
      kind: "Cluster",
      metadata: { name: "west", labels: { env: "prod" } },
      spec: { region: "eu-west", connection: { mode: "push", kubeconfigFile: "west.yaml" } },
    });

    // A sync through the kubeconfig join wrote, with no other credentials.
    const sync = await cli(["reconcile", "--repo", fleet(), "--once", "--kubeconfig-dir", membersDir()], {
      env: { KUBECONFIG: "/nonexistent" },
    });
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    const config = await liveObject(west, "/api/v1/namespaces/shop/configmaps/web");
    expect(asMap(config?.data).greeting).toBe("hello");

    // A token of 48 hours expires within two weeks: the status branch and gitfleet status say so.
    const observed = asMap(
      asMap(parse(gitIn(fleet(), "show", "gitfleet/status:status/clusters/west.yaml"))).observed,
    );
    expect(observed.credential).toEqual({
      kind: "token",
      notAfter: new Date(claims.exp * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
      fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/),
      expiring: true,
    });
    const status = await cli(["status", "--repo", fleet()]);
    expect(status.stdout).toContain(
      `cluster west: gitfleet's token expires ${String(asMap(observed.credential).notAfter)} — renew it: gitfleet join west`,
    );

    // Joined again: a new token, the Cluster file left as it is (no commit).
    const head = gitIn(fleet(), "rev-parse", "HEAD");
    const again = await cli([
      "join",
      "west",
      "--repo",
      fleet(),
      "--admin-kubeconfig",
      adminKubeconfig,
      "--kubeconfig-dir",
      membersDir(),
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("clusters/west.yaml is already in the fleet repo: left as it is");
    expect(gitIn(fleet(), "rev-parse", "HEAD")).toBe(head);
    expect(parse(readFileSync(path, "utf8")).users[0].user.token).not.toBe(kubeconfig.users[0].user.token);
  });

  it("prints the Cluster as a patch with --patch, and renews the token when joined again", async () => {
    const args = [
      "join",
      "west",
      "--repo",
      fleet(),
      "--admin-kubeconfig",
      adminKubeconfig,
      "--kubeconfig-dir",
      membersDir(),
    ];
    const head = gitIn(fleet(), "rev-parse", "HEAD");
    const first = await cli([...args, "--patch"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(
      "diff --git a/clusters/west.yaml b/clusters/west.yaml\nnew file mode 100644",
    );
    expect(gitIn(fleet(), "rev-parse", "HEAD")).toBe(head);
    const token = () => parse(readFileSync(join(membersDir(), "west.yaml"), "utf8")).users[0].user.token;
    const before = token();
    const again = await cli([...args, "--patch"]);
    expect(again.code, again.stderr).toBe(0);
    expect(token()).not.toBe(before);
  });

  it("prints the access it would make from the fleet alone with --print-rbac, touching no member", async () => {
    const result = await cli(["join", "west", "--repo", fleet(), "--print-rbac"]);
    expect(result.code, result.stderr).toBe(0);
    const docs = result.stdout
      .split(/^---\n/m)
      .filter(Boolean)
      .map((doc) => parse(doc) as JsonMap);
    expect(docs.map((d) => d.kind)).toEqual([
      "Namespace",
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "Role",
      "RoleBinding",
    ]);
    expect(JSON.stringify(docs[2]?.rules)).toContain(
      '"apiGroups":["apiextensions.k8s.io"],"resources":["customresourcedefinitions"]',
    );
    expect(
      await liveObject(members[0] as SimulatedMember, "/api/v1/namespaces/gitfleet-system"),
    ).toBeUndefined();
    expect(gitIn(fleet(), "log", "--format=%s")).toBe("Initial fleet");
  });

  it("needs the admin kubeconfig to join (exit 64), changing nothing", async () => {
    const result = await cli(["join", "west", "--repo", fleet(), "--kubeconfig-dir", membersDir()]);
    expect(result.stderr).toContain("required option '--admin-kubeconfig <file>' not specified");
    expect(result.code).toBe(64);
    expect(gitIn(fleet(), "log", "--format=%s")).toBe("Initial fleet");
  });

  it.each([
    [["join", "West_1"], 64, 'cluster name "West_1"'],
    [["join", "west", "--token-expiration", "5m"], 64, '--token-expiration "5m"'],
    [["join", "west", "--server", "http://10.0.0.1"], 64, '--server "http://10.0.0.1"'],
    [["join", "west", "--label", "env"], 64, '--label "env": give key=value'],
    [["join", "west", "--context", "east"], 64, "the admin kubeconfig has no context east"],
  ])("refuses %j with exit %i, changing nothing", async (args, code, text) => {
    const result = await cli([
      ...args,
      "--repo",
      fleet(),
      "--admin-kubeconfig",
      adminKubeconfig,
      "--kubeconfig-dir",
      membersDir(),
    ]);
    expect(result.stderr).toContain(text);
    expect(result.code).toBe(code);
    expect(gitIn(fleet(), "log", "--format=%s")).toBe("Initial fleet");
    expect(
      await liveObject(members[0] as SimulatedMember, "/api/v1/namespaces/gitfleet-system"),
    ).toBeUndefined();
  });
});
