import { Command, Option } from "commander";
import type { AgentFlags } from "../actions/agent.js";
import { type BuildFlags, configureBuildsFrom, withBuildOptions } from "../build-flags.js";
import type { ExitCodeValue } from "../exit-codes.js";
import { withGitAuthOptions } from "../git-auth.js";
import type { CommandOutput } from "../output.js";

/** `gitfleet agent`: pull mode, inside a member. */
export function registerAgent(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program.addCommand(
    withBuildOptions(withGitAuthOptions(new Command("agent")))
      .description(
        "pull mode: run inside a member cluster, apply rendered/<cluster>/ from a status commit signed by a trusted key, and report on the agent's own branch, <status branch>-agents/<cluster>",
      )
      .requiredOption("--cluster <name>", "the cluster this agent runs in (its name in the fleet repo)")
      .requiredOption("--repo <path-or-url>", "the fleet repo: a local path or an http(s) URL")
      .option(
        "--trusted-keys <file>",
        "required: the keys whose signatures on status commits the agent trusts: an SSH allowed-signers file, or an OpenPGP keyring with --trusted-keys-format openpgp. The agent applies nothing else",
      )
      .addOption(
        new Option("--trusted-keys-format <format>", "the format of --trusted-keys")
          .choices(["ssh", "openpgp"])
          .default("ssh"),
      )
      .option(
        "--branch <name>",
        "the source branch (Secret values and sync policies are read from it)",
        "main",
      )
      .option(
        "--status-branch <name>",
        "the status branch (default: fleet.yaml spec.statusBranch, else gitfleet/status)",
      )
      .option(
        "--kubeconfig <file>",
        "reach the cluster through this kubeconfig instead of the in-cluster service account",
      )
      .option("--context <name>", "the kubeconfig context (default: the cluster's name)")
      .option("--interval <duration>", "how often to look for a new status commit and check for drift", "30s")
      .option("--once", "sync once and exit (0 synced, 1 something failed)")
      .option(
        "--no-push",
        "keep the report in the cluster only (a ConfigMap), for agents that may not push their branch",
      )
      .option(
        "--sops-age-key-file <file>",
        "age identities (as age-keygen writes them) that open the fleet's sops-encrypted Secrets; without it such Secrets are reported, never applied",
      )
      .option("--cache-dir <dir>", "for a URL: where the local cache repository lives")
      .option("--log-level <level>", "trace, debug, info, warn or error", "info")
      .action(async (flags: AgentFlags & BuildFlags) => {
        configureBuildsFrom(flags);
        setExit(await (await import("../actions/agent.js")).runAgent(flags, output));
      }),
  );
}
