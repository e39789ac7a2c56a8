import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveConnections } from "../../src/kube/connections.js";
import type { Cluster } from "../../src/model/types.js";
import { tempDir } from "../helpers/git-repo.js";

/** How each Cluster's connection resolves among the credentials the operator offers. */

const cluster = (name: string, connection?: Record<string, string>): Cluster =>
  ({
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Cluster",
    metadata: { name },
    spec: connection ? { connection } : {},
  }) as Cluster;

// A kubeconfig with one context, and its own API server, per name.
const kubeconfig = (contexts: string[]) =>
  `apiVersion: v1\nkind: Config\nclusters:\n${contexts.map((c) => `- name: ${c}\n  cluster:\n    server: https://${c}.members.example\n    insecure-skip-tls-verify: true\n`).join("")}users:\n- name: u\n  user: {}\ncontexts:\n${contexts.map((c) => `- name: ${c}\n  context:\n    cluster: ${c}\n    user: u\n`).join("")}current-context: ${contexts[0]}\n`;

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir("gitfleet-connections-"));
  mkdirSync(join(dir, "kubeconfigs"));
});
afterEach(() => cleanup());

describe("resolveConnections", () => {
  it("names the context after the cluster unless told, reads each offered source, leaves pull mode alone", async () => {
    const main = join(dir, "main.kubeconfig");
    writeFileSync(main, kubeconfig(["east", "west-ctx"]));
    writeFileSync(join(dir, "kubeconfigs", "south.yaml"), kubeconfig(["south"]));
    const byPath = join(dir, "by-path.kubeconfig");
    writeFileSync(byPath, kubeconfig(["central"]));
    const connections = await resolveConnections(
      [
        cluster("east"),
        cluster("west", { context: "west-ctx" }),
        cluster("south", { kubeconfigFile: "south.yaml" }),
        cluster("north", { kubeconfigEnv: "GITFLEET_KUBECONFIG_NORTH" }),
        cluster("central", { kubeconfigEnv: "GITFLEET_KUBECONFIG_CENTRAL" }),
        cluster("edge", { mode: "pull" }),
        cluster("lost"),
      ],
      {
        kubeconfig: main,
        kubeconfigDir: join(dir, "kubeconfigs"),
        env: { GITFLEET_KUBECONFIG_NORTH: kubeconfig(["north"]), GITFLEET_KUBECONFIG_CENTRAL: byPath },
      },
    );
    const summary = connections.map((c) =>
      c.mode === "push" && "config" in c
        ? [c.cluster, c.context, c.config.getCurrentCluster()?.name]
        : [c.cluster, c.mode, "error" in c ? c.error : ""],
    );
    expect(summary).toEqual([
      ["east", "east", "east"],
      ["west", "west-ctx", "west-ctx"],
      ["south", "south", "south"],
      ["north", "north", "north"],
      ["central", "central", "central"],
      ["edge", "pull", ""],
      ["lost", "push", 'context "lost" is not in the kubeconfig'],
    ]);
  });
});
