import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemberCredentials } from "../../src/kube/connections.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import type { Cluster } from "../../src/model/types.js";
import { memberClientConfig, simulatedKubeconfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { tempDir } from "../helpers/git-repo.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * M2 (security audit): two Cluster files resolving to one member fought over its one inventory —
 * objects deleted and recreated every sync, each deletion inside the budget. Two Clusters reaching a
 * member through the same reference are now a validation error, and two reaching one API server
 * through different references are refused when the controller connects.
 */

describe("M2: two Clusters, one member", () => {
  it("the audit's shadow cluster (context: east) is a DUPLICATE_MEMBER error at its connection", () => {
    const result = loadFleet(
      minimalFleetWith({
        "clusters/shadow.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: shadow\nspec:\n  provider: aws\n  region: us-east\n  connection:\n    context: east\n",
      }),
    );
    expect(result.problems.filter((p) => p.severity === "error").map(formatProblem)).toEqual([
      'clusters/shadow.yaml:9:5: error: /spec/connection: cluster shadow reaches the same member as cluster east (clusters/east.yaml:1): context "east" of the controller\'s kubeconfig; each member is one Cluster [DUPLICATE_MEMBER]',
    ]);
  });

  it.each([
    [
      "the same file and context",
      "kubeconfigFile: a.yaml\n    context: x",
      "kubeconfigFile: a.yaml\n    context: x",
    ],
    [
      "the same variable, default context",
      "kubeconfigEnv: GITFLEET_KUBECONFIG_A\n    context: east",
      "kubeconfigEnv: GITFLEET_KUBECONFIG_A",
    ],
  ])("%s is refused", (_name, west, east) => {
    const cluster = (name: string, connection: string) =>
      `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\nspec:\n  provider: aws\n  connection:\n    ${connection}\n`;
    const result = loadFleet(
      minimalFleetWith({
        "clusters/east.yaml": cluster("east", east),
        "clusters/west.yaml": cluster("west", west),
      }),
    );
    expect(result.problems.filter((p) => p.code === "DUPLICATE_MEMBER")).toHaveLength(1);
  });

  it("a pull-mode Cluster and the push one it mirrors are not a conflict", () => {
    const result = loadFleet(
      minimalFleetWith({
        "clusters/shadow.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: shadow\nspec:\n  provider: aws\n  connection:\n    mode: pull\n    context: east\n",
      }),
    );
    expect(result.problems.filter((p) => p.code === "DUPLICATE_MEMBER")).toEqual([]);
  });

  const members: SimulatedMember[] = [];
  afterEach(async () => {
    for (const member of members.splice(0)) await member.close();
  });

  it("two contexts of one API server: neither cluster is synced, both say why", async () => {
    const east = await startMember({ name: "east" });
    members.push(east);
    const { dir, cleanup } = tempDir("gitfleet-m2-");
    try {
      const file = join(dir, "kubeconfig");
      writeFileSync(file, simulatedKubeconfig([east, { name: "east-again", url: east.url }]));
      const cluster = (name: string, context?: string) =>
        ({
          apiVersion: "gitfleet.io/v1alpha1",
          kind: "Cluster",
          metadata: { name },
          spec: context ? { connection: { context } } : {},
          origin: { file: "", index: 0 },
        }) as Cluster;
      const connections = await new MemberCredentials({ kubeconfig: file, env: {} }).resolve([
        cluster("east"),
        cluster("shadow", "east-again"),
      ]);
      expect(connections.map((c) => ("error" in c ? c.error : "ok"))).toEqual([
        "clusters east and shadow reach the same API server; each member must be one Cluster (fix spec.connection)",
        "clusters east and shadow reach the same API server; each member must be one Cluster (fix spec.connection)",
      ]);
      expect(memberClientConfig(east).getCurrentCluster()?.server).toBe(east.url);
    } finally {
      cleanup();
    }
  });
});
