import { type Command, Option } from "commander";
import { FORGE_KINDS, type Forge, openForge } from "../forge/forge.js";
import { forgeTarget } from "../forge/forge-target.js";
import { type GitCredentials, tokenFile } from "../git/git-credentials.js";
import { CliError, ExitCode } from "./exit-codes.js";

/** Which forge gitfleet posts statuses and plan comments to, and with what token (the flags below). */
export interface ForgeFlags {
  readonly forge?: string;
  readonly forgeApiUrl?: string;
  readonly forgeRepo?: string;
  readonly forgeTokenEnv: string;
  readonly forgeTokenFile?: string;
}

/** Adds the forge flags to a command that posts to the forge. */
export function withForgeOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        "--forge <kind>",
        "the forge's API: github, gitlab or gitea (Forgejo too); default: known from CI's environment or the repository's host (github.com, gitlab.com)",
      ).choices([...FORGE_KINDS, "forgejo"]),
    )
    .option(
      "--forge-api-url <url>",
      "the forge's REST API (default: from CI's environment, else https://api.github.com, https://HOST/api/v4 or https://HOST/api/v1)",
    )
    .option(
      "--forge-repo <repo>",
      "the repository on the forge, owner/name (GitLab: group/…/project); default: from CI's environment or the repository's URL",
    )
    .option(
      "--forge-token-env <name>",
      "environment variable holding the forge API token (read at each request)",
      "GITFLEET_FORGE_TOKEN",
    )
    .option(
      "--forge-token-file <path>",
      "a file holding the forge API token, read before every request (a rotating Secret)",
    );
}

/** The forge and repository CI's environment names: GitHub Actions, Gitea/Forgejo Actions, GitLab CI. */
function ciForge(env: NodeJS.ProcessEnv): {
  kind?: string;
  apiUrl?: string | undefined;
  repo?: string | undefined;
} {
  if (env.GITLAB_CI === "true")
    return { kind: "gitlab", apiUrl: env.CI_API_V4_URL, repo: env.CI_PROJECT_PATH };
  if (env.GITHUB_ACTIONS === "true")
    return {
      kind: env.GITEA_ACTIONS === "true" || env.FORGEJO_ACTIONS === "true" ? "gitea" : "github",
      apiUrl: env.GITHUB_API_URL,
      repo: env.GITHUB_REPOSITORY,
    };
  return {};
}

/**
 * The forge the flags (else CI's environment, else the repository's URL) name, with its token: the
 * token file, else the environment variable, else the Git credentials (a GitHub App's installation
 * token posts statuses too).
 */
export function forgeFromFlags(
  flags: ForgeFlags,
  context: { readonly repoUrl?: string; readonly git?: GitCredentials; readonly env?: NodeJS.ProcessEnv },
): Forge {
  const env = context.env ?? process.env;
  const ci = ciForge(env);
  const pick = (given: string | undefined, fromCi: string | undefined) => given ?? (fromCi || undefined);
  let target: ReturnType<typeof forgeTarget>;
  try {
    target = forgeTarget({
      ...(context.repoUrl ? { repoUrl: context.repoUrl } : {}),
      ...optional("kind", pick(flags.forge, ci.kind)),
      ...optional("apiUrl", pick(flags.forgeApiUrl, ci.apiUrl)),
      ...optional("repo", pick(flags.forgeRepo, ci.repo)),
    });
  } catch (error) {
    throw new CliError((error as Error).message, ExitCode.Usage);
  }
  return openForge({ ...target, token: forgeToken(flags, env, context.git) });
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

function forgeToken(
  flags: ForgeFlags,
  env: NodeJS.ProcessEnv,
  git: GitCredentials | undefined,
): () => Promise<string | undefined> {
  // Read at each request as the Git token file is: trimmed, bounded, one line.
  if (flags.forgeTokenFile) {
    const file = tokenFile(flags.forgeTokenFile);
    return () => file.token();
  }
  return async () => env[flags.forgeTokenEnv] || (await git?.token());
}

/** The pull request CI's environment names (GitHub/Gitea Actions' refs/pull/N/…, GitLab's merge request IID). */
export function ciPullRequest(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const github = /^refs\/pull\/(\d+)\//.exec(env.GITHUB_REF ?? "");
  const raw = github?.[1] ?? env.CI_MERGE_REQUEST_IID;
  return raw && /^\d{1,12}$/.test(raw) ? Number(raw) : undefined;
}
