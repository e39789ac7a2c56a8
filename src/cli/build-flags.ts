import { type Command, Option } from "commander";
import { configureBuilds } from "../builds/build-settings.js";
import { parseTeamSources } from "../builds/team-source-fetcher.js";
import { ChartSources } from "../helm/chart-sources.js";
import { DEFAULT_MAX_APP_OBJECTS, parseKindName } from "../model/load-policy.js";
import { CliError, ExitCode } from "./exit-codes.js";

/** What the operator bounds and allows in what a fleet repo builds (the flags below). */
export interface BuildFlags {
  readonly maxAppObjects?: string;
  readonly allowHookKind?: string | readonly string[];
  readonly chartSource?: string | readonly string[];
  readonly teamSource?: string | readonly string[];
}

/** Adds the build flags to a command that loads a fleet repo. */
export function withBuildOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        "--max-app-objects <count>",
        `the most objects one app may build or render, per build (an app past it is invalid)`,
      )
        .env("GITFLEET_MAX_APP_OBJECTS")
        .default(String(DEFAULT_MAX_APP_OBJECTS)),
    )
    .addOption(
      new Option(
        "--allow-hook-kind <kinds...>",
        "kinds allowed as sync hooks although cluster-scoped or protected (Namespace, PersistentVolume(Claim), CustomResourceDefinition), as kubectl names them: Namespace, ClusterRole.rbac.authorization.k8s.io (env: comma-separated)",
      ).env("GITFLEET_ALLOW_HOOK_KINDS"),
    )
    .addOption(
      new Option(
        "--chart-source <urls...>",
        "chart repositories and registries Helm apps may be fetched from, as URL prefixes (https://charts.example.com/stable, oci://ghcr.io/org); default: any public address, never loopback, link-local, private or cluster-internal ones (env: comma-separated)",
      ).env("GITFLEET_CHART_SOURCES"),
    )
    .addOption(
      new Option(
        "--team-source <entries...>",
        "repositories Teams may pin (spec.source): a repository URL or a prefix ending in /, each optionally =<token file> (a token for HTTP basic auth, read at each fetch); default: none (env: comma-separated)",
      ).env("GITFLEET_TEAM_SOURCES"),
    );
}

/** Sets the process's build settings from the flags; a bad value is a usage error. */
export function configureBuildsFrom(flags: BuildFlags): void {
  const max = Number(flags.maxAppObjects ?? DEFAULT_MAX_APP_OBJECTS);
  if (!Number.isSafeInteger(max) || max < 1)
    throw new CliError("--max-app-objects is a whole number of at least 1", ExitCode.Usage);
  const hookKinds = new Set<string>();
  for (const name of listOf(flags.allowHookKind)) {
    const key = parseKindName(name);
    if (!key)
      throw new CliError(
        `--allow-hook-kind ${JSON.stringify(name)}: a kind as kubectl names it (Namespace, ClusterRole.rbac.authorization.k8s.io)`,
        ExitCode.Usage,
      );
    hookKinds.add(key);
  }
  const chartSources = listOf(flags.chartSource);
  const sources = ChartSources.parse(chartSources);
  if ("error" in sources) throw new CliError(sources.error, ExitCode.Usage);
  const teamSources = listOf(flags.teamSource);
  try {
    parseTeamSources(teamSources);
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error), ExitCode.Usage);
  }
  configureBuilds({ policy: { maxAppObjects: max, hookKinds }, chartSources, teamSources });
}

// A flag's values, or its variable's comma-separated list.
function listOf(value: string | readonly string[] | undefined): string[] {
  const values = value === undefined ? [] : typeof value === "string" ? [value] : [...value];
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}
