import type { Command } from "commander";
import type { JoinOptions } from "../actions/join.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `gitfleet join CLUSTER`: gitfleet's own account and least RBAC in a member, its token, and the Cluster file. */
export function registerJoin(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program
    .command("join")
    .description(
      "make a cluster a push-mode member: with an admin kubeconfig, once, create gitfleet's ServiceAccount and the least RBAC the fleet needs there (the kinds it applies, what it reads), mint a bounded token, write a kubeconfig of it into the controller's kubeconfig directory, and commit the Cluster (provider, region and zone from the nodes) to the fleet repo",
    )
    .argument("<cluster>", "the cluster's name in the fleet (clusters/CLUSTER.yaml)")
    .requiredOption("--repo <dir>", "the fleet repo's work tree")
    .option(
      "--admin-kubeconfig <file>",
      "required: a kubeconfig that may create RBAC in the member: used once, never written anywhere",
    )
    .option("--context <name>", "the admin kubeconfig's context (default: its current context)")
    .option(
      "--kubeconfig-dir <dir>",
      "required: the controller's kubeconfig directory (--kubeconfig-dir of gitfleet run): CLUSTER.yaml is written there, mode 0600",
    )
    .option(
      "--server <url>",
      "the API server's URL as the controller reaches it (default: the admin kubeconfig's)",
    )
    .option(
      "--token-expiration <duration>",
      "how long the token is valid (the member may cap it); join again to renew",
      "2160h",
    )
    .option("--provider <name>", "the Cluster's provider (default: from the nodes' provider IDs)")
    .option("--region <name>", "the Cluster's region (default: the nodes' topology.kubernetes.io/region)")
    .option("--zone <name>", "the Cluster's zone (default: the nodes' zone, when they share one)")
    .option("--label <key=value>", "a label of the Cluster (repeat)", collect)
    .option("--patch", "print the Cluster file as a patch (git apply) instead of committing it")
    .option(
      "--print-rbac",
      "print the access join would make (ServiceAccount, ClusterRole, Role and bindings) from the fleet alone, and change nothing: for members given access by hand or by GitOps, and the agent chart's rbac.rules",
    )
    .addHelpText("after", "\nExit codes: 0 joined, 1 the member or the fleet refused, 64 a usage error.")
    .action(async (cluster: string, options: JoinOptions) => {
      setExit(await (await import("../actions/join.js")).runJoin(cluster, options, output));
    });
}
