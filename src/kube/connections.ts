import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { hostedApiServerUrl } from "../manifests/controlplane/endpoints.js";
import { controlPlaneNamespace } from "../model/controlplane/hosted-control-plane.js";
import { oneLine } from "../model/one-line.js";
import type { Cluster } from "../model/types.js";
import { fileVersion, readBoundedFile } from "../util/bounded-file.js";
import { hostedKubeConfig } from "./hosted-connection.js";
import { readAdminKubeconfig } from "./hosted-secrets.js";
import { MemberClient } from "./member-client.js";

/** How the controller reaches one member: a client configuration, or why it cannot. */
export type MemberConnection =
  | { readonly cluster: string; readonly mode: "push"; readonly config: KubeConfig; readonly context: string }
  /** A pull-mode member's agent syncs it; `config`, when the Cluster names one, lets the controller read the agent's report there. */
  | { readonly cluster: string; readonly mode: "pull"; readonly config?: KubeConfig }
  | { readonly cluster: string; readonly mode: "push"; readonly error: string };

/** Where member credentials may come from: what the operator configured, never what the fleet repo names. */
export type CredentialSource = "kubeconfig" | "directory" | "environment";

/** The prefix every `spec.connection.kubeconfigEnv` must have (the schema refuses other names). */
export const KUBECONFIG_ENV_PREFIX = "GITFLEET_KUBECONFIG_";

/** The credentials the operator offers the fleet repo to choose among. */
export interface ConnectionSources {
  /** --kubeconfig: one file with a context per member (default: KUBECONFIG, then ~/.kube/config, then in-cluster). */
  readonly kubeconfig?: string;
  /** --kubeconfig-dir: the only directory whose files `spec.connection.kubeconfigFile` may name. */
  readonly kubeconfigDir?: string;
  /** Environment variables: GITFLEET_KUBECONFIG_* (a kubeconfig's text, or the path of one), KUBECONFIG. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Sources whose kubeconfigs may run exec plugins or auth providers (--allow-exec). Default: kubeconfig only. */
  readonly allowExec?: readonly CredentialSource[];
}

/** The largest kubeconfig gitfleet reads: certificates inline make them kilobytes, never megabytes. */
export const MAX_KUBECONFIG_BYTES = 2 ** 20;

type Loaded = KubeConfig | { readonly error: string };

// The version of the kubeconfig a configuration was read from, carried on it for connectionKey.
const VERSION = Symbol("gitfleet.kubeconfigVersion");
type KubeConfigWithVersion = KubeConfig & { [VERSION]?: string };

/**
 * Resolves each Cluster's connection from the credentials the operator configured. The fleet repo
 * only chooses among them — a context of --kubeconfig (`spec.connection.context`, default the
 * cluster's name), a file of --kubeconfig-dir (`kubeconfigFile`, a bare file name) or a
 * GITFLEET_KUBECONFIG_* variable (`kubeconfigEnv`) — and never names a host path or another
 * variable. Files are read asynchronously, only if regular and at most 1 MiB, and again only when
 * they change, so a rotated Secret takes effect without a restart. A kubeconfig the repo selects
 * from the directory or the environment may not run exec plugins or auth providers unless the
 * operator allowed it for that source. No error names a path, a variable's value, file content or a
 * parser's snippet: only the cluster, the reference the repo wrote, and the kind of failure.
 */
export class MemberCredentials {
  private readonly loaded = new Map<string, { readonly version: string; readonly value: Loaded }>();

  constructor(private readonly sources: ConnectionSources) {}

  /**
   * Every Cluster's connection; two push-mode Clusters that reach the same API server get an error
   * each. A hosted cluster is reached at the endpoint its Cluster file gives, with the CA and client
   * certificate gitfleet generated into its host, read from the host at each resolution (hosts first,
   * for hosts that are hosted themselves) and built into a configuration by gitfleet
   * (hosted-connection.ts), never loaded as a kubeconfig.
   */
  async resolve(clusters: readonly Cluster[]): Promise<MemberConnection[]> {
    const direct = clusters.filter((cluster) => !cluster.spec.controlPlane);
    const byName = new Map<string, MemberConnection>();
    for (const connection of await Promise.all(direct.map((cluster) => this.connect(cluster))))
      byName.set(connection.cluster, connection);
    for (const cluster of hostingOrder(clusters))
      byName.set(cluster.metadata.name, await this.connectHosted(cluster, byName));
    return refuseShared(clusters.map((cluster) => byName.get(cluster.metadata.name) as MemberConnection));
  }

  // A hosted cluster: the admin kubeconfig Secret in its host's control-plane namespace.
  private async connectHosted(
    cluster: Cluster,
    connections: ReadonlyMap<string, MemberConnection>,
  ): Promise<MemberConnection> {
    const name = cluster.metadata.name;
    const host = cluster.spec.controlPlane?.host ?? "";
    const fail = (error: string): MemberConnection => ({ cluster: name, mode: "push", error });
    const reached = connections.get(host);
    if (!reached || !("config" in reached) || !reached.config)
      return fail(
        `its host ${host} is not reachable${reached && "error" in reached ? ` (${reached.error})` : ""}`,
      );
    const client = new MemberClient(host, reached.config, { timeoutMs: HOSTED_READ_TIMEOUT_MS, retries: 1 });
    const namespace = controlPlaneNamespace(cluster);
    let text: string | undefined;
    try {
      text = await readAdminKubeconfig(client, namespace);
    } catch (error) {
      return fail(
        `its admin kubeconfig cannot be read from host ${host}: ${oneLine(error instanceof Error ? error.message : String(error))}`,
      );
    }
    if (text === undefined)
      return fail(
        `host ${host} holds no admin kubeconfig for it yet (gitfleet writes it after syncing the host)`,
      );
    const server = hostedApiServerUrl(cluster) ?? "";
    const loaded = await this.cached(`hosted:${name}`, digest(`${server}\0${text}`), async () =>
      hostedKubeConfig({ cluster: name, host, server, kubeconfig: text }),
    );
    if ("error" in loaded) return fail(loaded.error);
    return { cluster: name, mode: "push", config: loaded, context: name };
  }

  private async connect(cluster: Cluster): Promise<MemberConnection> {
    const name = cluster.metadata.name;
    const connection = cluster.spec.connection ?? {};
    if (connection.mode === "pull") {
      // Only a Cluster that names its credentials is read; pull-mode members are usually out of reach.
      const named = connection.context ?? connection.kubeconfigFile ?? connection.kubeconfigEnv;
      if (!named) return { cluster: name, mode: "pull" };
      const reached = await this.contextConfig(name, connection);
      return { cluster: name, mode: "pull", ...("config" in reached ? { config: reached.config } : {}) };
    }
    return { cluster: name, mode: "push", ...(await this.contextConfig(name, connection)) };
  }

  // The client configuration of a cluster's context, or why there is none.
  private async contextConfig(
    name: string,
    connection: NonNullable<Cluster["spec"]["connection"]>,
  ): Promise<{ config: KubeConfig; context: string } | { error: string }> {
    const context = connection.context ?? name;
    const { source, loaded } = await this.kubeconfigOf(connection);
    if ("error" in loaded) return loaded;
    const contextObject = loaded.getContextObject(context);
    if (!contextObject) return { error: `context "${context}" is not in the ${describeSource(source)}` };
    const user = loaded.getUser(contextObject.user);
    const allowed = this.sources.allowExec ?? ["kubeconfig"];
    if ((user?.exec || user?.authProvider) && !allowed.includes(source))
      return {
        error: `the ${describeSource(source)} runs ${user.exec ? "an exec plugin" : "an auth provider"} for context "${context}", which the operator allows only for ${allowed.length > 0 ? allowed.join(", ") : "no source"} (--allow-exec)`,
      };
    const config = new KubeConfig();
    config.loadFromString(loaded.exportConfig());
    config.setCurrentContext(context);
    const version = (loaded as KubeConfigWithVersion)[VERSION];
    if (version !== undefined) (config as KubeConfigWithVersion)[VERSION] = version;
    return { config, context };
  }

  private async kubeconfigOf(
    connection: NonNullable<Cluster["spec"]["connection"]>,
  ): Promise<{ source: CredentialSource; loaded: Loaded }> {
    if (connection.kubeconfigEnv)
      return { source: "environment", loaded: await this.fromEnvironment(connection.kubeconfigEnv) };
    if (connection.kubeconfigFile)
      return { source: "directory", loaded: await this.fromDirectory(connection.kubeconfigFile) };
    return { source: "kubeconfig", loaded: await this.fromOperatorKubeconfig() };
  }

  private async fromEnvironment(variable: string): Promise<Loaded> {
    // The schema admits only GITFLEET_KUBECONFIG_* names; this holds for any caller too.
    if (!variable.startsWith(KUBECONFIG_ENV_PREFIX) || !/^[A-Za-z0-9_]+$/.test(variable))
      return { error: `kubeconfigEnv must name a ${KUBECONFIG_ENV_PREFIX}* variable` };
    const value = this.sources.env[variable];
    if (!value)
      return { error: `environment variable ${variable} (spec.connection.kubeconfigEnv) is not set` };
    if (/^\s*(apiVersion|clusters|contexts|kind|users|current-context)\s*:/m.test(value))
      return this.cached(`env:${variable}`, digest(value), async () =>
        parse(value, `the kubeconfig in ${variable}`),
      );
    // The variable holds a path the operator set (never the repo): read it as any kubeconfig file.
    return this.file(`env-file:${variable}`, value, `kubeconfig file ${variable} names`);
  }

  private async fromDirectory(file: string): Promise<Loaded> {
    const directory = this.sources.kubeconfigDir;
    if (!directory)
      return {
        error: "no kubeconfig directory is configured (--kubeconfig-dir), so kubeconfigFile cannot be used",
      };
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(file) || file.includes(".."))
      return {
        error: `kubeconfigFile ${JSON.stringify(file)} must be a file name in the kubeconfig directory`,
      };
    return this.file(`dir:${file}`, join(directory, file), `kubeconfig file ${file}`, directory);
  }

  private async fromOperatorKubeconfig(): Promise<Loaded> {
    const path = this.sources.kubeconfig ?? defaultKubeconfigPath(this.sources.env);
    if (path) return this.file("kubeconfig", path, "kubeconfig (--kubeconfig)");
    if (!this.sources.env.KUBERNETES_SERVICE_HOST)
      return { error: "no kubeconfig: pass --kubeconfig, or set KUBECONFIG" };
    return this.cached("in-cluster", "in-cluster", async () => {
      const config = new KubeConfig();
      config.loadFromCluster();
      return config;
    });
  }

  // A kubeconfig file, read again only when its version (device, inode, size, mtime) changed.
  private async file(key: string, path: string, what: string, within?: string): Promise<Loaded> {
    const version = (await fileVersion(path)) ?? "missing";
    return this.cached(key, version, async () => {
      const read = await readBoundedFile(path, MAX_KUBECONFIG_BYTES, within ? { within } : {});
      if (!read.ok) return { error: `the ${what} ${read.reason}` };
      return parse(new TextDecoder().decode(read.bytes), `the ${what}`);
    });
  }

  private async cached(key: string, version: string, load: () => Promise<Loaded>): Promise<Loaded> {
    const known = this.loaded.get(key);
    if (known?.version === version) return known.value;
    const value = await load();
    if (!("error" in value)) (value as KubeConfigWithVersion)[VERSION] = `${key}@${version}`;
    this.loaded.set(key, { version, value });
    return value;
  }
}

/**
 * What identifies a connection's credentials: its context, server and the version of the kubeconfig
 * it came from, so clients made for it are made again when a rotated kubeconfig is read.
 */
export function connectionKey(connection: { readonly config: KubeConfig }): string {
  const versions = (connection.config as KubeConfigWithVersion)[VERSION];
  return `${connection.config.getCurrentContext()} ${connection.config.getCurrentCluster()?.server ?? ""} ${versions ?? ""}`;
}

/** How long reading a hosted cluster's admin kubeconfig from its host may take. */
const HOSTED_READ_TIMEOUT_MS = 5_000;

// Hosted clusters, each after its host when the host is hosted too (validation refuses cycles; a
// cycle here would leave its clusters last, unreachable).
function hostingOrder(clusters: readonly Cluster[]): Cluster[] {
  const hosted = clusters.filter((cluster) => cluster.spec.controlPlane);
  const ordered: Cluster[] = [];
  const placed = new Set(clusters.filter((c) => !c.spec.controlPlane).map((c) => c.metadata.name));
  for (let round = 0; round < hosted.length && ordered.length < hosted.length; round++)
    for (const cluster of hosted)
      if (!placed.has(cluster.metadata.name) && placed.has(cluster.spec.controlPlane?.host ?? "")) {
        ordered.push(cluster);
        placed.add(cluster.metadata.name);
      }
  return [...ordered, ...hosted.filter((cluster) => !placed.has(cluster.metadata.name))];
}

/** One resolution, for callers that need no cache between calls (a plan, a test). */
export function resolveConnections(
  clusters: readonly Cluster[],
  sources: ConnectionSources,
): Promise<MemberConnection[]> {
  return new MemberCredentials(sources).resolve(clusters);
}

function parse(text: string, what: string): Loaded {
  const config = new KubeConfig();
  try {
    config.loadFromString(text);
    return config;
  } catch {
    // The parser's message quotes the text: only the fact that it failed is said.
    return { error: `${what} does not parse as a kubeconfig` };
  }
}

function describeSource(source: CredentialSource): string {
  if (source === "directory") return "kubeconfig from the kubeconfig directory";
  if (source === "environment") return "kubeconfig from the environment";
  return "kubeconfig";
}

// KUBECONFIG's first file, else ~/.kube/config when it exists.
function defaultKubeconfigPath(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const first = env.KUBECONFIG?.split(":").find((p) => p !== "");
  if (first) return first;
  const home = join(env.HOME ?? homedir(), ".kube", "config");
  return existsSync(home) ? home : undefined;
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

// Two push-mode Clusters on one API server would fight over its inventory: neither is synced.
function refuseShared(connections: MemberConnection[]): MemberConnection[] {
  const byServer = new Map<string, string[]>();
  for (const c of connections)
    if (c.mode === "push" && "config" in c) {
      const server = c.config.getCurrentCluster()?.server.replace(/\/+$/, "") ?? "";
      byServer.set(server, [...(byServer.get(server) ?? []), c.cluster]);
    }
  return connections.map((c) => {
    if (c.mode !== "push" || !("config" in c)) return c;
    const server = c.config.getCurrentCluster()?.server.replace(/\/+$/, "") ?? "";
    const others = (byServer.get(server) ?? []).filter((name) => name !== c.cluster);
    if (others.length === 0) return c;
    return {
      cluster: c.cluster,
      mode: "push",
      error: `clusters ${[c.cluster, ...others].sort().join(" and ")} reach the same API server; each member must be one Cluster (fix spec.connection)`,
    };
  });
}
