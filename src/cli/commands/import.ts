import type { Command } from "commander";
import type { ImportOptions } from "../actions/import.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `gitfleet import APP`: what runs in a namespace of the members, as an app with its Placement and a Migration. */
export function registerImport(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program
    .command("import")
    .description(
      "bring an app that already runs in members under gitfleet: read a namespace's objects from each member (read only), write apps/APP/ as they run (what the server set left out), a Placement on the clusters that run them, Overrides where they differ, and a Migration that adopts them a cluster per batch without restarting a pod",
    )
    .argument("<app>", "the app's name (apps/APP/)")
    .requiredOption("--repo <dir>", "the fleet repo's work tree: its Clusters say how to reach the members")
    .requiredOption("-n, --namespace <namespace>", "the namespace the app runs in")
    .option(
      "--cluster <name>",
      "read this member (repeat, or separate with commas; default: every cluster gitfleet has credentials for)",
      collect,
    )
    .option("-l, --selector <labels>", "only objects matching this label selector (app=checkout)")
    .option(
      "--kind <apiVersion/Kind>",
      "also read this kind, such as a custom resource (repeat); Deployments, StatefulSets, DaemonSets, CronJobs, Services, ConfigMaps, ServiceAccounts, claims, autoscalers, budgets, policies, Ingresses and RBAC are always read",
      collect,
    )
    .option("--migration <name>", "the Migration's name (default: the app's)")
    .option("--observe <duration>", "how long each batch must stay Healthy before the next may start", "10m")
    .option(
      "--kubeconfig <file>",
      "a context per member, as for reconcile (default: KUBECONFIG, then ~/.kube/config)",
    )
    .option(
      "--kubeconfig-dir <dir>",
      "the directory whose files Clusters may name in spec.connection.kubeconfigFile",
    )
    .option("--patch", "print the change as a patch (git apply) instead of committing it")
    .addHelpText(
      "after",
      "\nExit codes: 0 imported, 1 nothing to import or a member cannot be read, 64 a usage error.",
    )
    .action(async (app: string, options: ImportOptions) => {
      setExit(await (await import("../actions/import.js")).runImport(app, options, output));
    });
}
