import { readFileSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
import type { Cluster } from "../model/types.js";

/** How the controller reaches one member: a client configuration, or why it cannot. */
export type MemberConnection =
  | { readonly cluster: string; readonly mode: "push"; readonly config: KubeConfig; readonly context: string }
  /** A pull-mode member's agent syncs it; `config`, when the Cluster names one, lets the controller read the agent's report there. */
  | { readonly cluster: string; readonly mode: "pull"; readonly config?: KubeConfig }
  | { readonly cluster: string; readonly mode: "push"; readonly error: string };

export interface ConnectionSources {
  /** --kubeconfig: one file with a context per member. */
  readonly kubeconfig?: string;
  /** Environment variables (kubeconfigEnv references, KUBECONFIG). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * Resolves each Cluster's connection: a pull-mode member is left to its agent; a push-mode member
 * uses the kubeconfig named by `spec.connection.kubeconfigFile` or `kubeconfigEnv` (a variable holding
 * a path or a kubeconfig's text), else `--kubeconfig`, else KUBECONFIG or ~/.kube/config; the
 * context is `spec.connection.context`, else the cluster's name. Credentials never come from the
 * fleet repo: it only names where they are.
 */
export function resolveConnections(
  clusters: readonly Cluster[],
  sources: ConnectionSources,
): MemberConnection[] {
  const files = new Map<string, KubeConfig | string>();
  return clusters.map((cluster) => {
    const name = cluster.metadata.name;
    const connection = cluster.spec.connection ?? {};
    const reached = contextConfig(name, connection, sources, files);
    if (connection.mode === "pull") {
      // Only a Cluster that names its credentials is read; pull-mode members are usually out of reach.
      const named = connection.context ?? connection.kubeconfigFile ?? connection.kubeconfigEnv;
      return {
        cluster: name,
        mode: "pull",
        ...(named && "config" in reached ? { config: reached.config } : {}),
      };
    }
    return { cluster: name, mode: "push", ...reached };
  });
}

// The client configuration of a cluster's context, or why there is none.
function contextConfig(
  name: string,
  connection: NonNullable<Cluster["spec"]["connection"]>,
  sources: ConnectionSources,
  files: Map<string, KubeConfig | string>,
): { config: KubeConfig; context: string } | { error: string } {
  const context = connection.context ?? name;
  const loaded = loadKubeconfig(connection, sources, files);
  if (typeof loaded === "string") return { error: loaded };
  if (!loaded.getContextObject(context))
    return {
      error: `context "${context}" is not in the kubeconfig (${loaded.getContexts().length} contexts: ${loaded
        .getContexts()
        .map((c) => c.name)
        .slice(0, 8)
        .join(", ")})`,
    };
  const config = new KubeConfig();
  config.loadFromString(loaded.exportConfig());
  config.setCurrentContext(context);
  return { config, context };
}

function loadKubeconfig(
  connection: NonNullable<Cluster["spec"]["connection"]>,
  sources: ConnectionSources,
  files: Map<string, KubeConfig | string>,
): KubeConfig | string {
  if (connection.kubeconfigEnv) {
    const value = sources.env[connection.kubeconfigEnv];
    if (!value)
      return `environment variable ${connection.kubeconfigEnv} (spec.connection.kubeconfigEnv) is not set`;
    if (/^\s*(apiVersion|clusters|contexts|kind)\s*:/m.test(value))
      return cached(files, `env:${connection.kubeconfigEnv}`, () => fromText(value));
    return cached(files, value, () => fromFile(value));
  }
  const file = connection.kubeconfigFile ?? sources.kubeconfig ?? sources.env.KUBECONFIG?.split(":")[0];
  if (file) return cached(files, file, () => fromFile(file));
  return cached(files, "default", () => {
    const config = new KubeConfig();
    config.loadFromDefault();
    return config;
  });
}

function cached(
  files: Map<string, KubeConfig | string>,
  key: string,
  load: () => KubeConfig,
): KubeConfig | string {
  let found = files.get(key);
  if (found === undefined) {
    try {
      found = load();
    } catch (error) {
      found = error instanceof Error ? error.message : String(error);
    }
    files.set(key, found);
  }
  return found;
}

function fromFile(path: string): KubeConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(
      `cannot read kubeconfig ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  return fromText(text, path);
}

function fromText(text: string, where = "the kubeconfig"): KubeConfig {
  const config = new KubeConfig();
  try {
    config.loadFromString(text);
  } catch (error) {
    throw new Error(`${where} does not parse: ${error instanceof Error ? error.message : String(error)}`);
  }
  return config;
}
