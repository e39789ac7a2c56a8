import { DEFAULT_LOAD_POLICY, type LoadPolicy } from "../model/load-policy.js";

/**
 * What the operator who runs gitfleet set for building fleets, once per process at the command line
 * (flags, or their environment variables): the load policy the pure core is given — the objects an
 * app may build, the kinds allowed as hooks — and the chart repositories and registries Helm apps may
 * be fetched from. Plain data, so a plan's worker thread is given the same.
 */
export interface BuildSettings {
  readonly policy: LoadPolicy;
  /** The operator's allow-list of chart sources (URL prefixes); empty: any public address. */
  readonly chartSources: readonly string[];
  /** The repositories Teams may pin (--team-source: `<URL or prefix/>[=<token file>]`); empty: none. */
  readonly teamSources?: readonly string[];
}

export const DEFAULT_BUILD_SETTINGS: BuildSettings = { policy: DEFAULT_LOAD_POLICY, chartSources: [] };

let current: BuildSettings = DEFAULT_BUILD_SETTINGS;

/** Sets the process's build settings (the CLI does, before it loads anything). */
export function configureBuilds(settings: BuildSettings): void {
  current = settings;
}

/** The process's build settings: what the command line set, else the defaults. */
export function buildSettings(): BuildSettings {
  return current;
}
