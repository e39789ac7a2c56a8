import { type Command, Option } from "commander";
import { type GitCredentials, gitHubApp, staticToken, tokenFile } from "../git/git-credentials.js";
import type { SshAccess } from "../git/ssh-transport.js";
import { CliError, ExitCode } from "./exit-codes.js";

/** How a command that reaches the fleet repo over HTTPS authenticates (the flags below). */
export interface GitAuthFlags {
  readonly tokenEnv: string;
  readonly tokenFile?: string;
  readonly githubAppId?: string;
  readonly githubAppInstallationId?: string;
  readonly githubAppKeyFile?: string;
  readonly githubApiUrl?: string;
  readonly sshKeyFile?: string;
  readonly sshKnownHosts?: string;
}

/** Adds the Git authentication flags to a command that takes --repo. */
export function withGitAuthOptions(command: Command): Command {
  return command
    .option(
      "--token-env <name>",
      "for a URL: environment variable holding the Git access token (read once, at start)",
      "GITFLEET_GIT_TOKEN",
    )
    .option(
      "--token-file <path>",
      "for a URL: a file holding the Git access token, read before every fetch and push (a mounted Secret that rotates is taken up without a restart)",
    )
    .option("--github-app-id <id>", "for a URL: authenticate as this GitHub App (with the two flags below)")
    .option("--github-app-installation-id <id>", "the GitHub App's installation on the fleet repo's owner")
    .option("--github-app-key-file <path>", "the GitHub App's private key (PEM), read at each token refresh")
    .addOption(
      new Option(
        "--github-api-url <url>",
        "the GitHub REST API (GitHub Enterprise: https://host/api/v3)",
      ).default("https://api.github.com"),
    )
    .option(
      "--ssh-key-file <path>",
      "for an SSH remote (ssh://… or user@host:path): the private key (a deploy key), read before every fetch and push",
    )
    .option(
      "--ssh-known-hosts <path>",
      "for an SSH remote: known_hosts naming the remote's host key (always checked; no host is trusted on first use)",
    );
}

/**
 * The credentials the flags name, or undefined for none: a GitHub App, else a token file, else the
 * token in the environment (GITFLEET_GIT_USERNAME, when set, is the user name for the last two).
 * Refuses half a GitHub App and two ways at once.
 */
export function gitCredentials(
  flags: GitAuthFlags,
  env: NodeJS.ProcessEnv = process.env,
): GitCredentials | undefined {
  const app = [flags.githubAppId, flags.githubAppInstallationId, flags.githubAppKeyFile];
  const username = env.GITFLEET_GIT_USERNAME || undefined;
  if (app.some((value) => value !== undefined)) {
    const [appId, installationId, privateKeyFile] = app;
    if (!appId || !installationId || !privateKeyFile)
      throw new CliError(
        "a GitHub App needs --github-app-id, --github-app-installation-id and --github-app-key-file together",
        ExitCode.Usage,
      );
    if (flags.tokenFile)
      throw new CliError(
        "--token-file and a GitHub App are two ways to authenticate: give one",
        ExitCode.Usage,
      );
    if (!/^[0-9]{1,20}$/.test(appId) || !/^[0-9]{1,20}$/.test(installationId))
      throw new CliError("--github-app-id and --github-app-installation-id are numbers", ExitCode.Usage);
    if (!flags.githubApiUrl || !/^https?:\/\//.test(flags.githubApiUrl))
      throw new CliError("--github-api-url is an http(s) URL", ExitCode.Usage);
    return gitHubApp({ appId, installationId, privateKeyFile, apiUrl: flags.githubApiUrl });
  }
  if (flags.tokenFile) return tokenFile(flags.tokenFile, username);
  const token = env[flags.tokenEnv];
  return token ? staticToken(token, username, `token in $${flags.tokenEnv}`) : undefined;
}

/** `credentials` and `ssh` for FleetRepo.open, from the flags (nothing when none is configured). */
export function withGitAccess(flags: GitAuthFlags): { credentials?: GitCredentials; ssh?: SshAccess } {
  const credentials = gitCredentials(flags);
  const ssh = sshAccess(flags);
  return { ...(credentials ? { credentials } : {}), ...(ssh ? { ssh } : {}) };
}

/** The SSH key and known_hosts the flags name: both or neither. */
export function sshAccess(flags: GitAuthFlags): SshAccess | undefined {
  if (flags.sshKeyFile === undefined && flags.sshKnownHosts === undefined) return undefined;
  if (!flags.sshKeyFile || !flags.sshKnownHosts)
    throw new CliError(
      "an SSH remote needs --ssh-key-file and --ssh-known-hosts together: host keys are always checked",
      ExitCode.Usage,
    );
  return { keyFile: flags.sshKeyFile, knownHostsFile: flags.sshKnownHosts };
}
