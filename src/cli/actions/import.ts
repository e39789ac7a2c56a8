import { explainInvalidDns1123Label, explainInvalidFleetName } from "../../apimachinery/names.js";
import { parseLabelSelectorQuery } from "../../apimachinery/selector-query.js";
import { resolveConnections } from "../../kube/connections.js";
import { MemberClient } from "../../kube/member-client.js";
import { IMPORT_KINDS, type ImportKind, readNamespace } from "../../kube/read-namespace.js";
import { importApp, type LiveCluster } from "../../migrate/import-app.js";
import { parseDuration } from "../../model/duration.js";
import type { FleetModel } from "../../model/types.js";
import { mapConcurrently } from "../../util/map-concurrently.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { deliverFleetChange } from "../fleet-change.js";
import type { CommandOutput } from "../output.js";
import { loadValidFleet } from "../read-fleet.js";

export interface ImportOptions {
  readonly repo: string;
  readonly namespace: string;
  readonly cluster?: readonly string[];
  readonly selector?: string;
  readonly kind?: readonly string[];
  readonly migration?: string;
  readonly observe: string;
  readonly kubeconfig?: string;
  readonly kubeconfigDir?: string;
  readonly patch?: boolean;
}

/**
 * `gitfleet import APP`: reads what runs in a namespace of the fleet's members and writes the app,
 * its Placement(s), Overrides where clusters differ, and a Migration adopting it a cluster per batch.
 */
export async function runImport(
  app: string,
  options: ImportOptions,
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const migration = options.migration ?? app;
  checkArguments(app, migration, options);
  const kinds = [...IMPORT_KINDS, ...(options.kind ?? []).map(parseKind)];
  const { tree, model } = await loadValidFleet(options.repo, output, "importing into it");
  for (const taken of [`apps/${app}/app.yaml`, `placements/${app}.yaml`, `migrations/${migration}.yaml`])
    if (tree.has(taken))
      throw new CliError(`${taken} already exists in ${options.repo}: choose another app name`);
  if (model.apps.some((a) => a.name === app))
    throw new CliError(`the fleet already has an app named ${app}: choose another app name`);
  const live = await readMembers(model, chosenClusters(model, options.cluster), kinds, options, output);
  const result = importApp({
    app,
    namespace: options.namespace,
    clusters: live,
    migration,
    observe: options.observe,
  });
  for (const skip of result.skipped)
    output.err(`gitfleet: ${skip.cluster}: ${skip.object} not imported: ${skip.reason}\n`);
  if (result.templates === 0)
    throw new CliError(
      `nothing to import: no object of namespace ${options.namespace}${options.selector ? ` matching ${options.selector}` : ""} runs in ${live.map((c) => c.cluster).join(", ")}`,
    );
  for (const object of result.partial)
    output.err(
      `gitfleet: ${object} runs in only some of ${result.clusters.join(", ")}: it has a Placement of its own\n`,
    );
  await deliverFleetChange(
    options.repo,
    result.files,
    `Import ${app}: ${result.templates} object(s) of namespace ${options.namespace} from ${result.clusters.join(", ")}\n\nThe Migration ${migration} adopts them a cluster per batch; approve each batch in review.`,
    options.patch ? "patch" : "commit",
    output,
  );
  if (!options.patch)
    output.err(
      `gitfleet: next: gitfleet validate ${options.repo}; open a pull request; approve migrations/${migration}.yaml's first batch (${result.clusters[0]}) in review\n`,
    );
  return ExitCode.Ok;
}

function checkArguments(app: string, migration: string, options: ImportOptions): void {
  const usage = (message: string) => new CliError(message, ExitCode.Usage);
  const badApp = explainInvalidFleetName(app);
  if (badApp) throw usage(`app name ${JSON.stringify(app)}: ${badApp}`);
  const badMigration = explainInvalidFleetName(migration);
  if (badMigration) throw usage(`--migration ${JSON.stringify(migration)}: ${badMigration}`);
  const badNamespace = explainInvalidDns1123Label(options.namespace);
  if (badNamespace) throw usage(`--namespace ${JSON.stringify(options.namespace)}: ${badNamespace}`);
  if (parseDuration(options.observe) === undefined)
    throw usage(`--observe ${JSON.stringify(options.observe)}: a duration such as 30s, 10m or 1h`);
  if (options.selector !== undefined)
    try {
      parseLabelSelectorQuery(options.selector);
    } catch (error) {
      throw usage(`--selector ${JSON.stringify(options.selector)}: ${(error as Error).message}`);
    }
}

// --kind apps/v1/Deployment or v1/ConfigMap: a kind beyond the ones always read.
function parseKind(text: string): ImportKind {
  const slash = text.lastIndexOf("/");
  const apiVersion = text.slice(0, slash);
  const kind = text.slice(slash + 1);
  if (slash <= 0 || !/^([a-z0-9.-]+\/)?v[0-9a-z]+$/.test(apiVersion) || !/^[A-Z][A-Za-z0-9]*$/.test(kind))
    throw new CliError(
      `--kind ${JSON.stringify(text)}: give apiVersion/Kind, such as apps/v1/Deployment`,
      ExitCode.Usage,
    );
  return { apiVersion, kind };
}

function chosenClusters(model: FleetModel, names: readonly string[] | undefined): string[] {
  const known = model.clusters.map((c) => c.metadata.name);
  if (!names || names.length === 0) return known;
  const chosen = names
    .flatMap((n) => n.split(","))
    .map((n) => n.trim())
    .filter(Boolean);
  for (const name of chosen)
    if (!known.includes(name))
      throw new CliError(`no cluster ${name} in the fleet (clusters: ${known.join(", ")})`, ExitCode.Usage);
  return [...new Set(chosen)];
}

// Every chosen member read (GETs only), in the order chosen; one that cannot be read fails the import:
// what runs there would be missing from the Placement.
async function readMembers(
  model: FleetModel,
  clusters: readonly string[],
  kinds: readonly ImportKind[],
  options: ImportOptions,
  output: CommandOutput,
): Promise<LiveCluster[]> {
  const connections = await resolveConnections(
    clusters.map(
      (name) => model.clusters.find((c) => c.metadata.name === name) as FleetModel["clusters"][number],
    ),
    {
      ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
      ...(options.kubeconfigDir ? { kubeconfigDir: options.kubeconfigDir } : {}),
      env: process.env,
    },
  );
  // Without --cluster, the clusters gitfleet has no credentials for (pull-mode members whose agent
  // reports by Git) are passed over, said on stderr; a cluster asked for by name must be read.
  const explicit = (options.cluster ?? []).length > 0;
  const readable = connections.filter((connection) => {
    if (explicit || ("config" in connection && connection.config)) return true;
    output.err(
      `gitfleet: ${connection.cluster} not read: ${"error" in connection ? connection.error : "a pull-mode cluster without credentials"}\n`,
    );
    return false;
  });
  return mapConcurrently(readable, 4, async (connection) => {
    if (!("config" in connection) || !connection.config)
      throw new CliError(
        `cannot read ${connection.cluster}: ${"error" in connection ? connection.error : "a pull-mode cluster without credentials"} (leave it out with --cluster)`,
      );
    const client = new MemberClient(connection.cluster, connection.config, { retries: 1 });
    try {
      return {
        cluster: connection.cluster,
        objects: await readNamespace(client, options.namespace, kinds, options.selector),
      };
    } catch (error) {
      throw new CliError(
        `cannot read ${connection.cluster}: ${(error as Error).message} (leave it out with --cluster)`,
      );
    }
  });
}
