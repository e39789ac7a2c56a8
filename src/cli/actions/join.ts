import { chmod, mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import type { JsonMap } from "../../apimachinery/json.js";
import {
  explainInvalidFleetName,
  explainInvalidLabelKey,
  explainInvalidLabelValue,
} from "../../apimachinery/names.js";
import { loadFleetWithBuilds } from "../../builds/load-with-builds.js";
import {
  applyAccess,
  endpointOf,
  memberKubeconfig,
  mintToken,
  readTopology,
  resolveResources,
  type Topology,
} from "../../kube/join-member.js";
import { MemberApiError, MemberClient, message } from "../../kube/member-client.js";
import { formatValidationReport } from "../../load/summary.js";
import { parseDuration } from "../../model/duration.js";
import type { FileTree } from "../../model/file-tree.js";
import type { FleetModel } from "../../model/types.js";
import { renderFleet } from "../../render/render-fleet.js";
import { INVENTORY_NAMESPACE } from "../../sync/inventory.js";
import { appliedKinds, MEMBER_ACCOUNT, memberAccessObjects } from "../../sync/member-access.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { deliverFleetChange } from "../fleet-change.js";
import type { CommandOutput } from "../output.js";
import { readFleetTree } from "../read-fleet.js";

export interface JoinOptions {
  readonly repo: string;
  readonly adminKubeconfig?: string;
  readonly context?: string;
  readonly kubeconfigDir?: string;
  readonly server?: string;
  readonly tokenExpiration: string;
  readonly provider?: string;
  readonly region?: string;
  readonly zone?: string;
  readonly label?: readonly string[];
  readonly patch?: boolean;
  readonly printRbac?: boolean;
}

/**
 * `gitfleet join CLUSTER`: with the admin's kubeconfig, once, creates gitfleet's ServiceAccount and
 * the least RBAC the fleet needs in the member, mints a bounded token for it, writes a kubeconfig of
 * that token into the operator's kubeconfig directory, and adds the Cluster to the fleet repo. The
 * admin's credentials are used for this only: nothing of them is written anywhere.
 */
export async function runJoin(
  cluster: string,
  options: JoinOptions,
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const tree = await readFleetTree(options.repo);
  if (options.printRbac) return printRbac(tree, options, output);
  const { adminKubeconfig, kubeconfigDir } = options;
  if (!adminKubeconfig)
    throw new CliError("required option '--admin-kubeconfig <file>' not specified", ExitCode.Usage);
  if (!kubeconfigDir)
    throw new CliError("required option '--kubeconfig-dir <dir>' not specified", ExitCode.Usage);
  return joinMember(cluster, tree, { ...options, adminKubeconfig, kubeconfigDir }, output);
}

// The join itself, once the flags it needs are there.
async function joinMember(
  cluster: string,
  tree: FileTree,
  options: JoinOptions & { readonly adminKubeconfig: string; readonly kubeconfigDir: string },
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const { seconds, labels } = checkArguments(cluster, options);

  const path = `clusters/${cluster}.yaml`;
  const config = adminConfig(options);
  const admin = new MemberClient(cluster, config, { retries: 1, fieldManager: "gitfleet-join" });
  const topology = await readTopology(admin).catch((error: unknown) => {
    throw new CliError(`cannot read ${cluster}'s nodes with the admin kubeconfig: ${message(error)}`);
  });
  // Joined again (a token to renew, RBAC to follow the fleet): the Cluster file stays as it is.
  const again = tree.has(path);
  const file = clusterFile(cluster, { ...topology, ...given(options) }, labels);
  // The fleet with the new Cluster must be valid before anything in the member changes.
  const joined: FileTree = again ? tree : new Map([...tree, [path, new TextEncoder().encode(file)]]);
  const loaded = await loadFleetWithBuilds(joined);
  if (!loaded.model) {
    output.err(formatValidationReport(options.repo, loaded));
    throw new CliError(`the fleet repo with ${path} added is invalid: nothing was changed`);
  }
  const model = loaded.model;
  const access = await accessFor(model, admin);
  try {
    await applyAccess(admin, access);
  } catch (error) {
    throw new CliError(`cannot create gitfleet's access in ${cluster}: ${message(error)}`);
  }
  const { token, expires } = await mintToken(admin, seconds).catch((error: unknown) => {
    throw new CliError(
      `cannot mint a token for ${INVENTORY_NAMESPACE}/${MEMBER_ACCOUNT} in ${cluster}: ${message(error)}`,
    );
  });
  const endpoint = await endpointOf(config);
  const kubeconfig = memberKubeconfig(
    cluster,
    options.server ? { ...endpoint, server: options.server } : endpoint,
    token,
  );
  await checkReach(cluster, kubeconfig);
  await writePrivate(options.kubeconfigDir, `${cluster}.yaml`, kubeconfig);
  output.err(
    `gitfleet: ${cluster}: ServiceAccount ${INVENTORY_NAMESPACE}/${MEMBER_ACCOUNT} and ClusterRole gitfleet-member (${access.length} objects); token valid until ${expires}, in ${join(options.kubeconfigDir, `${cluster}.yaml`)}\n`,
  );
  if (again) {
    const named = model.clusters.find((c) => c.metadata.name === cluster)?.spec.connection?.kubeconfigFile;
    output.err(
      named === `${cluster}.yaml`
        ? `gitfleet: ${path} is already in the fleet repo: left as it is\n`
        : `gitfleet: ${path} is already in the fleet repo and reaches the member otherwise: gitfleet uses the new kubeconfig once it says connection.kubeconfigFile: ${cluster}.yaml\n`,
    );
    return ExitCode.Ok;
  }
  await deliverFleetChange(
    options.repo,
    new Map([[path, file]]),
    `Join cluster ${cluster}${topology.region ? ` (${topology.region})` : ""}\n\ngitfleet reaches it with the kubeconfig file ${cluster}.yaml of its kubeconfig directory.`,
    options.patch ? "patch" : "commit",
    output,
  );
  return ExitCode.Ok;
}

// The access a joined member gets, as manifests, from the fleet alone (resource names from its CRDs,
// else as Kubernetes guesses them): for members given access by hand or by GitOps, and the agent
// chart's rules.
async function printRbac(
  tree: FileTree,
  options: JoinOptions,
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const loaded = await loadFleetWithBuilds(tree);
  if (!loaded.model) {
    output.err(formatValidationReport(options.repo, loaded));
    return ExitCode.Failed;
  }
  const model = loaded.model;
  output.out(
    (await accessFor(model, undefined)).map((o) => `---\n${stringify(o, { lineWidth: 0 })}`).join(""),
  );
  return ExitCode.Ok;
}

// What gitfleet needs in a member of this fleet: the kinds it renders, resolved by the member's
// discovery when a client is given, else by the fleet's CRDs and Kubernetes' guess.
async function accessFor(model: FleetModel, client: MemberClient | undefined): Promise<JsonMap[]> {
  const rendered = renderFleet(model).objects;
  const crds = rendered.map((o) => o.object).filter((o) => o.kind === "CustomResourceDefinition");
  return memberAccessObjects(model, await resolveResources(client, appliedKinds(model, rendered), crds));
}

function checkArguments(
  cluster: string,
  options: JoinOptions,
): { seconds: number; labels: Record<string, string> } {
  const usage = (text: string) => new CliError(text, ExitCode.Usage);
  const bad = explainInvalidFleetName(cluster);
  if (bad) throw usage(`cluster name ${JSON.stringify(cluster)}: ${bad}`);
  const ms = parseDuration(options.tokenExpiration);
  // The TokenRequest API's floor is ten minutes.
  if (ms === undefined || ms < 600_000)
    throw usage(
      `--token-expiration ${JSON.stringify(options.tokenExpiration)}: a duration of at least 10m, such as 2160h`,
    );
  if (options.server !== undefined && !/^https:\/\/[^\s/]+/.test(options.server))
    throw usage(`--server ${JSON.stringify(options.server)}: an https URL of the member's API server`);
  const labels: Record<string, string> = {};
  for (const pair of options.label ?? []) {
    const eq = pair.indexOf("=");
    const [key, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
    const wrong =
      eq < 0 ? "give key=value" : (explainInvalidLabelKey(key) ?? explainInvalidLabelValue(value));
    if (wrong) throw usage(`--label ${JSON.stringify(pair)}: ${wrong}`);
    labels[key] = value;
  }
  return { seconds: Math.floor(ms / 1000), labels };
}

function adminConfig(options: { readonly adminKubeconfig: string; readonly context?: string }): KubeConfig {
  const config = new KubeConfig();
  try {
    config.loadFromFile(options.adminKubeconfig);
  } catch (error) {
    throw new CliError(
      `cannot read the admin kubeconfig ${options.adminKubeconfig}: ${(error as Error).message}`,
    );
  }
  if (options.context) {
    if (!config.getContextObject(options.context))
      throw new CliError(`the admin kubeconfig has no context ${options.context}`, ExitCode.Usage);
    config.setCurrentContext(options.context);
  }
  return config;
}

function given(options: JoinOptions): Topology {
  return {
    ...(options.provider ? { provider: options.provider } : {}),
    ...(options.region ? { region: options.region } : {}),
    ...(options.zone ? { zone: options.zone } : {}),
  };
}

function clusterFile(cluster: string, topology: Topology, labels: Record<string, string>): string {
  const body = {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Cluster",
    metadata: { name: cluster, ...(Object.keys(labels).length > 0 ? { labels } : {}) },
    spec: { ...topology, connection: { mode: "push", kubeconfigFile: `${cluster}.yaml` } },
  };
  return `# Joined by gitfleet join: gitfleet's own ServiceAccount and RBAC in the member, its token in the\n# controller's kubeconfig directory (${cluster}.yaml).\n${stringify(body, { lineWidth: 0 })}`;
}

// The new credentials must work before they are written: gitfleet's own namespace, read with the
// token. A member's authorizer learns a new binding from a watch, so a refusal is asked again for a
// few seconds before it counts.
async function checkReach(cluster: string, kubeconfig: string): Promise<void> {
  const config = new KubeConfig();
  config.loadFromString(kubeconfig);
  const client = new MemberClient(cluster, config, { retries: 2 });
  for (let attempt = 0; ; attempt++) {
    try {
      await client.raw("GET", `/api/v1/namespaces/${INVENTORY_NAMESPACE}/configmaps?limit=1`);
      return;
    } catch (error) {
      if (!(error instanceof MemberApiError && error.code === 403) || attempt >= 20)
        throw new CliError(`${cluster} refuses gitfleet's new token: ${message(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

// Written beside, then renamed: a reader sees the old file or the new one, never half of either.
async function writePrivate(dir: string, name: string, text: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${name}.${process.pid}.tmp`);
  await writeFile(temp, text, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, join(dir, name));
}
