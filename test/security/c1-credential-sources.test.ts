import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ConnectionSources, MemberCredentials } from "../../src/kube/connections.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { formatProblem } from "../../src/model/problem.js";
import type { Cluster } from "../../src/model/types.js";
import { simulatedKubeconfig } from "../../src/sim/kubeconfig.js";
import { startMember } from "../../src/sim/member-server.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { branchFiles, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { MINIMAL_FLEET, minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * C1 (security audit): a Cluster could name any controller environment variable or host file as
 * its kubeconfig, and the read error published the variable's value (the Git token) or a parser's
 * snippet of the file to the status branch, the logs and the API. The fleet repo now only chooses
 * among credentials the operator configured — a context of --kubeconfig, a file name in
 * --kubeconfig-dir, a GITFLEET_KUBECONFIG_* variable — and no error carries a path, a value or content.
 */

const TOKEN = "ghp_SUPERSECRETTOKEN123notreal";
const cluster = (name: string, connection?: Record<string, string>): Cluster =>
  ({
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Cluster",
    metadata: { name },
    spec: connection ? { connection } : {},
    origin: { file: `clusters/${name}.yaml`, index: 0 },
  }) as Cluster;

const CLUSTER = (connection: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: east\n  labels:\n    env: prod\nspec:\n  provider: aws\n  region: us-east\n  connection:\n${connection}`;

describe("C1: the fleet repo may name only what the operator offers", () => {
  it.each([
    [
      "the audit's GITFLEET_GIT_TOKEN",
      "    kubeconfigEnv: GITFLEET_GIT_TOKEN\n",
      "/spec/connection/kubeconfigEnv",
    ],
    ["AWS_SECRET_ACCESS_KEY", "    kubeconfigEnv: AWS_SECRET_ACCESS_KEY\n", "/spec/connection/kubeconfigEnv"],
    ["/proc/self/environ", "    kubeconfigFile: /proc/self/environ\n", "/spec/connection/kubeconfigFile"],
    ["/etc/passwd", "    kubeconfigFile: /etc/passwd\n", "/spec/connection/kubeconfigFile"],
    [
      "a relative path up",
      "    kubeconfigFile: ../../etc/kubernetes/admin.conf\n",
      "/spec/connection/kubeconfigFile",
    ],
    ["a subdirectory", "    kubeconfigFile: docs/kubeconfig.yaml\n", "/spec/connection/kubeconfigFile"],
    ["/dev/zero (H2)", "    kubeconfigFile: /dev/zero\n", "/spec/connection/kubeconfigFile"],
  ])("%s is a schema error at its line", (_name, connection, pointer) => {
    const result = loadFleet(minimalFleetWith({ "clusters/east.yaml": CLUSTER(connection) }));
    expect(result.model).toBeUndefined();
    const errors = result.problems.filter((p) => p.severity === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      file: "clusters/east.yaml",
      line: 11,
      path: pointer,
      code: "SCHEMA_VIOLATION",
    });
  });

  it("accepts a file name and a GITFLEET_KUBECONFIG_ variable", () => {
    const result = loadFleet(
      minimalFleetWith({
        "clusters/east.yaml": CLUSTER("    kubeconfigFile: east.kubeconfig\n    context: prod-east\n"),
        "clusters/west.yaml": CLUSTER("    kubeconfigEnv: GITFLEET_KUBECONFIG_WEST\n").replace(
          /east/g,
          "west",
        ),
      }),
    );
    expect(result.problems.filter((p) => p.severity === "error").map(formatProblem)).toEqual([]);
  });
});

describe("C1, H1, H2: what the controller reads, and what its errors say", () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir("gitfleet-c1-"));
    mkdirSync(join(dir, "kubeconfigs"));
  });
  afterEach(() => cleanup());

  const kubeconfig = (context: string, user: string = "{}") =>
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:9\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user: ${user}\ncontexts:\n- name: ${context}\n  context:\n    cluster: c\n    user: u\n`;
  const execUser = (proof: string) =>
    `\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: sh\n      args: ["-c", "id > ${proof}; echo '{}'"]\n      interactiveMode: Never`;

  async function resolve(clusters: Cluster[], sources: Partial<ConnectionSources> = {}) {
    const connections = await new MemberCredentials({
      kubeconfigDir: join(dir, "kubeconfigs"),
      env: {},
      ...sources,
    }).resolve(clusters);
    return connections.map((c) => ("error" in c ? c.error : `${c.mode} ${"context" in c ? c.context : ""}`));
  }

  it("names no value, path or content in any error", async () => {
    writeFileSync(join(dir, "kubeconfigs", "junk.yaml"), `GITFLEET_GIT_TOKEN=${TOKEN}\n\u0000binary`);
    writeFileSync(join(dir, "other.kubeconfig"), kubeconfig("a-secret-context-name"));
    symlinkSync("/etc/passwd", join(dir, "kubeconfigs", "escape.yaml"));
    const errors = await resolve(
      [
        cluster("a", { kubeconfigEnv: "GITFLEET_GIT_TOKEN" }),
        cluster("b", { kubeconfigEnv: "GITFLEET_KUBECONFIG_B" }),
        cluster("c", { kubeconfigEnv: "GITFLEET_KUBECONFIG_UNSET" }),
        cluster("d", { kubeconfigFile: "/proc/self/environ" }),
        cluster("e", { kubeconfigFile: "junk.yaml" }),
        cluster("f", { kubeconfigFile: "escape.yaml" }),
        cluster("g", { kubeconfigFile: "missing.yaml" }),
        cluster("h"),
      ],
      {
        kubeconfig: join(dir, "other.kubeconfig"),
        env: { GITFLEET_GIT_TOKEN: TOKEN, GITFLEET_KUBECONFIG_B: TOKEN },
      },
    );
    expect(errors).toEqual([
      "kubeconfigEnv must name a GITFLEET_KUBECONFIG_* variable",
      "the kubeconfig file GITFLEET_KUBECONFIG_B names does not exist",
      "environment variable GITFLEET_KUBECONFIG_UNSET (spec.connection.kubeconfigEnv) is not set",
      'kubeconfigFile "/proc/self/environ" must be a file name in the kubeconfig directory',
      "the kubeconfig file junk.yaml does not parse as a kubeconfig",
      "the kubeconfig file escape.yaml is outside its directory",
      "the kubeconfig file missing.yaml does not exist",
      'context "h" is not in the kubeconfig',
    ]);
    expect(errors.join("\n")).not.toContain(TOKEN);
    expect(errors.join("\n")).not.toContain(dir);
    expect(errors.join("\n")).not.toContain("a-secret-context-name");
  });

  it("takes a kubeconfig directory laid out as a mounted Secret (files behind ..data), and refuses a '..' step out of it", async () => {
    const kubeconfigs = join(dir, "kubeconfigs");
    mkdirSync(join(kubeconfigs, "..2026_12_06_10_00_00.000000001"));
    writeFileSync(join(kubeconfigs, "..2026_12_06_10_00_00.000000001", "east.yaml"), kubeconfig("a"));
    symlinkSync("..2026_12_06_10_00_00.000000001", join(kubeconfigs, "..data"));
    symlinkSync("..data/east.yaml", join(kubeconfigs, "east.yaml"));
    // A sibling of the directory whose name starts with the directory's own: still outside.
    writeFileSync(join(dir, "kubeconfigs..other.yaml"), kubeconfig("a"));
    symlinkSync("../kubeconfigs..other.yaml", join(kubeconfigs, "sibling.yaml"));
    expect(
      await resolve([
        cluster("a", { kubeconfigFile: "east.yaml" }),
        cluster("b", { kubeconfigFile: "sibling.yaml" }),
      ]),
    ).toEqual(["push a", "the kubeconfig file sibling.yaml is outside its directory"]);
  });

  it("H2: a device, a FIFO or an oversized file in the directory is refused without reading it", async () => {
    symlinkSync("/dev/zero", join(dir, "kubeconfigs", "zero.yaml"));
    execFileSync("mkfifo", [join(dir, "kubeconfigs", "fifo.yaml")]);
    writeFileSync(join(dir, "kubeconfigs", "big.yaml"), Buffer.alloc(2 ** 20 + 1, "#"));
    const before = process.memoryUsage().rss;
    const errors = await resolve([
      cluster("a", { kubeconfigFile: "zero.yaml" }),
      cluster("b", { kubeconfigFile: "fifo.yaml" }),
      cluster("c", { kubeconfigFile: "big.yaml" }),
    ]);
    expect(errors).toEqual([
      "the kubeconfig file zero.yaml is outside its directory",
      "the kubeconfig file fifo.yaml is not a regular file",
      "the kubeconfig file big.yaml is too large",
    ]);
    expect(process.memoryUsage().rss - before).toBeLessThan(128 * 2 ** 20);
  });

  it("H1: a kubeconfig the repo selects may not run an exec plugin unless the operator allows it", async () => {
    const proof = join(dir, "exec-rce-proof");
    writeFileSync(join(dir, "kubeconfigs", "docs-kubeconfig.yaml"), kubeconfig("a", execUser(proof)));
    const refused = await resolve([cluster("a", { kubeconfigFile: "docs-kubeconfig.yaml" })]);
    expect(refused).toEqual([
      'the kubeconfig from the kubeconfig directory runs an exec plugin for context "a", which the operator allows only for kubeconfig (--allow-exec)',
    ]);
    const environment = await resolve([cluster("a", { kubeconfigEnv: "GITFLEET_KUBECONFIG_A" })], {
      env: { GITFLEET_KUBECONFIG_A: kubeconfig("a", execUser(proof)) },
    });
    expect(environment[0]).toMatch(/^the kubeconfig from the environment runs an exec plugin/);
    const allowed = await resolve([cluster("a", { kubeconfigFile: "docs-kubeconfig.yaml" })], {
      allowExec: ["directory"],
    });
    expect(allowed).toEqual(["push a"]);
  });

  it("reads a rotated kubeconfig again without a restart", async () => {
    const file = join(dir, "kubeconfigs", "east.yaml");
    writeFileSync(file, kubeconfig("old"));
    const credentials = new MemberCredentials({ kubeconfigDir: join(dir, "kubeconfigs"), env: {} });
    const context = async () => {
      const [connection] = await credentials.resolve([
        cluster("east", { kubeconfigFile: "east.yaml", context: "new" }),
      ]);
      return connection && "error" in connection ? connection.error : "connected";
    };
    expect(await context()).toBe('context "new" is not in the kubeconfig from the kubeconfig directory');
    writeFileSync(file, `${kubeconfig("new")}\n`);
    expect(await context()).toBe("connected");
  });
});

describe("C1: end to end, the token is nowhere", () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir("gitfleet-c1-e2e-"));
  });
  afterEach(() => cleanup());

  it("reconcile --once with a Cluster pointing at a variable that holds the token: not in status, commits or output", async () => {
    const east = await startMember({ name: "east" });
    try {
      const repo = join(dir, "repo");
      mkdirSync(repo);
      createRepo(
        repo,
        fileTreeFromText({
          ...MINIMAL_FLEET,
          "clusters/west.yaml": (MINIMAL_FLEET["clusters/west.yaml"] ?? "").concat(
            "  connection:\n    kubeconfigEnv: GITFLEET_KUBECONFIG_WEST\n",
          ),
        }),
      );
      writeFileSync(join(dir, "kubeconfig"), simulatedKubeconfig([east]));
      const result = await gitfleetAsync(
        [
          "reconcile",
          "--repo",
          repo,
          "--once",
          "--kubeconfig",
          join(dir, "kubeconfig"),
          "--log-level",
          "debug",
        ],
        {
          env: { GITFLEET_KUBECONFIG_WEST: TOKEN, GITFLEET_GIT_TOKEN: TOKEN, GITFLEET_WEBHOOK_SECRET: TOKEN },
        },
      );
      expect(result.stdout).toContain(
        "west: not synced (no connection: the kubeconfig file GITFLEET_KUBECONFIG_WEST names does not exist)",
      );
      expect(result.stdout).toMatch(/east: \d+ objects/);
      expect(`${result.stdout}${result.stderr}`).not.toContain(TOKEN);
      for (const [path, text] of branchFiles(repo, "gitfleet/status"))
        expect(text, path).not.toContain(TOKEN);
      expect(gitIn(repo, "log", "--format=%B", "gitfleet/status")).not.toContain(TOKEN);
    } finally {
      await east.close();
    }
  });
});
