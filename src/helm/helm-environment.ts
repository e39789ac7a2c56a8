import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { isExecutable } from "../util/run-program.js";

/** Where helm is, where its output is cached, and how it may reach chart registries. */
export interface HelmEnvironment {
  /** The helm binary, or undefined when none was found (every chart is then an error). */
  readonly binary: string | undefined;
  /** Fetched charts and rendered output, by digest. */
  readonly cacheDir: string;
  /** Registries (host:port) reached over plain HTTP instead of HTTPS, such as a loopback registry. */
  readonly plainHttpHosts: readonly string[];
  /** The longest one helm run may take (its CPU time is bounded by the same). */
  readonly timeoutMs: number;
  /** The memory one helm run may allocate. */
  readonly memoryBytes: number;
}

/** The memory one helm run may allocate unless GITFLEET_HELM_MEMORY says otherwise, in MiB. */
export const DEFAULT_HELM_MEMORY_MB = 1024;

/** The version scripts/build-helm.sh builds and the container image ships. */
export const HELM_VERSION = "v3.22.0";

/**
 * The environment from variables: GITFLEET_HELM (the binary; else `helm` on the PATH, else the build
 * scripts/build-helm.sh caches), GITFLEET_CACHE_DIR (default ~/.cache/gitfleet),
 * GITFLEET_HELM_PLAIN_HTTP (comma-separated host:port list), GITFLEET_HELM_TIMEOUT (seconds, default
 * 120), GITFLEET_HELM_MEMORY (MiB, default 1024).
 */
export function helmEnvironment(env: NodeJS.ProcessEnv = process.env): HelmEnvironment {
  const cacheRoot = env.GITFLEET_CACHE_DIR || join(homedir(), ".cache", "gitfleet");
  const timeout = Number(env.GITFLEET_HELM_TIMEOUT);
  const memory = Number(env.GITFLEET_HELM_MEMORY);
  return {
    binary: findHelm(env),
    cacheDir: join(cacheRoot, "helm"),
    plainHttpHosts: (env.GITFLEET_HELM_PLAIN_HTTP ?? "")
      .split(",")
      .map((host) => host.trim())
      .filter(Boolean),
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout * 1000 : 120_000,
    memoryBytes: (Number.isFinite(memory) && memory >= 64 ? memory : DEFAULT_HELM_MEMORY_MB) * 2 ** 20,
  };
}

function findHelm(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GITFLEET_HELM) return env.GITFLEET_HELM;
  const candidates = (env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, "helm"));
  candidates.push(join(homedir(), ".cache", "gitfleet", `helm-${HELM_VERSION}`, "helm"));
  return candidates.find(isExecutable);
}
