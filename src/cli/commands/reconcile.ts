import { hostname } from "node:os";
import { Command, Option } from "commander";
import type { LoopFlags } from "../actions/reconcile.js";
import { type BuildFlags, configureBuildsFrom, withBuildOptions } from "../build-flags.js";
import { DEFAULT_FOLLOW_INTERVAL, DEFAULT_STATUS_BRANCH } from "../defaults.js";
import type { ExitCodeValue } from "../exit-codes.js";
import { withForgeOptions } from "../forge-flags.js";
import { withGitAuthOptions } from "../git-auth.js";
import type { CommandOutput } from "../output.js";
import { SECRET_DIGEST_KEY_ENV } from "../secret-digest-key.js";

/** `gitfleet reconcile` (once, or polling) and `gitfleet run` (the long-running controller with its HTTP endpoint). */
export function registerReconcile(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program.addCommand(
    loopCommand("reconcile")
      .description(
        "reconcile the fleet repo into the status branch: read the source branch, validate, schedule, render, commit rendered/ and status/",
      )
      .option("--once", "reconcile the branch's tip once and exit (0 valid, 1 the source commit is invalid)")
      .action(async (flags: LoopFlags & BuildFlags) => {
        configureBuildsFrom(flags);
        setExit(await (await import("../actions/reconcile.js")).runLoop(flags, output, false));
      }),
  );
  program.addCommand(
    withForgeOptions(loopCommand("run"))
      .description(
        "run the controller: reconcile on every poll and on push webhooks; serve the dashboard, the JSON API, /metrics, /webhook, /healthz and /readyz",
      )
      .option("--listen <host:port>", "where the HTTP endpoint listens", "127.0.0.1:8080")
      .option(
        "--commit-status",
        "post a commit status on every source commit reconciled: pending, then success or failure with the first validation problem (the forge from the --forge flags, else the repository's URL; the token from --forge-token-*, else the Git credentials); a forge that is down never delays reconciling",
      )
      .option("--commit-status-context <name>", "the commit status's name", "gitfleet/reconcile")
      .option(
        "--notification-secrets-dir <dir>",
        "the directory of notification sinks' URLs and signing keys that fleet.yaml's spec.notifications names (<secretRef>.url, <secretRef>.signing-key; a mounted Secret, read at each delivery)",
      )
      .option(
        "--dashboard-url <url>",
        "the dashboard's public URL: commit statuses link to its page for the status commit",
      )
      .option(
        "--plan-revisions <patterns...>",
        "branch-name patterns /api/plan may render besides the source branch's history, e.g. 'pr/*' (* within a path segment, ** across)",
      )
      .option("--plan-memory-mb <mb>", "the heap each plan's worker may use (/api/plan)", "1024")
      .option("--plan-timeout <duration>", "a plan taking longer is ended (/api/plan)", "2m")
      .option(
        "--allowed-hosts <names...>",
        "host names the HTTP endpoint answers to (Host header; IP addresses always; default: the loopback names when --listen is a loopback address, else any)",
      )
      .option(
        "--webhook-secret-env <name>",
        "environment variable holding the webhook secret (GitHub/Gitea HMAC key, GitLab token); unset disables /webhook",
        "GITFLEET_WEBHOOK_SECRET",
      )
      .option(
        "--leader-elect",
        "run as one replica of several: only the holder of a coordination.k8s.io Lease in the management cluster reconciles and writes; the others stand by, following the status branch",
      )
      .addOption(
        new Option("--leader-elect-namespace <namespace>", "the namespace of the leader Lease")
          .env("POD_NAMESPACE")
          .default("default"),
      )
      .option("--leader-elect-lease <name>", "the name of the leader Lease", "gitfleet")
      .option(
        "--leader-elect-lease-duration <duration>",
        "how long standbys wait after the leader's last renewal before taking over",
        "15s",
      )
      .option(
        "--leader-elect-renew-deadline <duration>",
        "how long the leader keeps writing without a renewal (shorter than the lease duration)",
        "10s",
      )
      .option(
        "--leader-elect-retry-period <duration>",
        "how often candidates try and the leader renews",
        "2s",
      )
      .option(
        "--standby-follow-interval <duration>",
        "with --leader-elect: how often a standby brings its state up to the status branch's tip (a shorter one makes a takeover replay less, a longer one reads the branch less)",
        DEFAULT_FOLLOW_INTERVAL,
      )
      .option(
        "--shards <n>",
        "with --leader-elect: divide the push-mode members over n shards (consistent hashing), each probed and synced by the replica holding its Lease; the leader renders and writes decisions (0: no shards, the leader syncs every member)",
        "0",
      )
      .option(
        "--management-kubeconfig <file>",
        "the kubeconfig of the cluster holding the leader Lease (default: the in-cluster service account)",
      )
      .option(
        "--management-context <name>",
        "the context of --management-kubeconfig (default: its current context)",
      )
      .action(async (flags: LoopFlags & BuildFlags) => {
        configureBuildsFrom(flags);
        setExit(await (await import("../actions/reconcile.js")).runLoop(flags, output, true));
      }),
  );
}

function loopCommand(name: string): Command {
  return withBuildOptions(withGitAuthOptions(new Command(name)))
    .addOption(
      new Option(
        "--repo <path-or-url>",
        "the fleet repo: a local path (work tree or bare, used in place) or an http(s) URL",
      )
        .env("GITFLEET_REPO")
        .makeOptionMandatory(),
    )
    .option("--branch <name>", "the branch people commit intent to", "main")
    .option(
      "--status-branch <name>",
      `the branch gitfleet writes (default: fleet.yaml spec.statusBranch, else ${DEFAULT_STATUS_BRANCH})`,
    )
    .option(
      "--interval <duration>",
      "poll interval, e.g. 30s or 3m (default: fleet.yaml spec.reconcileInterval, else 3m)",
    )
    .option("--no-sync", "only write the status branch; apply nothing to member clusters")
    .option(
      "--kubeconfig <file>",
      "kubeconfig with a context per member cluster, named after the cluster unless spec.connection.context says otherwise (default: KUBECONFIG, ~/.kube/config)",
    )
    .option(
      "--kubeconfig-dir <dir>",
      "the directory whose files a Cluster may name in spec.connection.kubeconfigFile (none by default: such Clusters are not synced)",
    )
    .addOption(
      new Option(
        "--allow-exec <sources...>",
        "credential sources whose kubeconfigs may run exec plugins or auth providers: kubeconfig, directory, environment, or none",
      )
        .choices(["kubeconfig", "directory", "environment", "none"])
        .default(["kubeconfig"]),
    )
    .option(
      "--cache-dir <dir>",
      "for a URL: where the local cache repository lives (default ~/.cache/gitfleet/repos)",
    )
    .option(
      "--snapshot-dir <dir>",
      "where the reconciler keeps its snapshot, so a restart resumes from it (default for a URL: beside the cache repository; for a local path: none)",
    )
    .option("--no-snapshot", "keep no snapshot: every start restores from the status branch")
    .option(
      "--author <identity>",
      'status commit author, "Name <email>" (default: fleet.yaml spec.commitAuthor, else gitfleet <gitfleet@localhost>)',
    )
    .option(
      "--signing-key <key>",
      "sign status commits: an SSH private key file, or a gpg key id with --signing-format openpgp",
    )
    .addOption(
      new Option("--signing-format <format>", "how --signing-key signs")
        .choices(["ssh", "openpgp"])
        .default("ssh"),
    )
    .option(
      "--trusted-keys <file>",
      "keys whose signatures on status commits are trusted (besides --signing-key's own): an SSH allowed-signers file, or an OpenPGP keyring with --trusted-keys-format openpgp. Without trusted keys, a status branch tip this process did not write is never applied as it is: the source is rendered again",
    )
    .addOption(
      new Option("--trusted-keys-format <format>", "the format of --trusted-keys").choices([
        "ssh",
        "openpgp",
      ]),
    )
    .option(
      "--secret-digest-key-file <file>",
      `the fleet's key for Secrets' value digests on the status branch (default: ${SECRET_DIGEST_KEY_ENV}, else a key for this process only)`,
    )
    .addOption(
      new Option(
        "--api-tokens-file <file>",
        "bearer tokens of automation (lines `<name> <owner names> sha256:<hash of the token>`): each sees the apps of the teams whose owners it names (everything for fleet.yaml's platformOwners). Without this, --oidc-issuer or --anonymous-read, the API and dashboard answer anyone only on a loopback --listen, and nobody on any other address",
      ).env("GITFLEET_API_TOKENS_FILE"),
    )
    .option(
      "--anonymous-read",
      "anyone may read the API and the dashboard (never plan) without a token or a sign-in",
    )
    .option(
      "--oidc-issuer <url>",
      "people sign in to the dashboard and API with this OpenID Connect provider (its issuer URL exactly as its discovery document names it); each sees the apps of the teams whose owners name them (@user, a verified e-mail, @org/team from an org:team group)",
    )
    .option("--oidc-client-id <id>", "with --oidc-issuer: gitfleet's client id at the provider")
    .option(
      "--oidc-client-secret-file <file>",
      "with --oidc-issuer: a file holding gitfleet's client secret at the provider",
    )
    .option(
      "--oidc-scopes <scopes>",
      "with --oidc-issuer: the scopes asked for, comma-separated (default openid,profile,email,groups)",
      (value: string) => value.split(",").filter((s) => s !== ""),
    )
    .option(
      "--public-url <url>",
      "the address people reach gitfleet at (the provider sends them back to <url>/auth/callback; https makes the session cookie Secure)",
    )
    .option(
      "--session-key-file <file>",
      "with --oidc-issuer: at least 32 bytes that seal people's session cookies (default: a key for this process only, so people sign in again after a restart)",
    )
    .option(
      "--backup-stores-dir <dir>",
      "the operator's off-host backup stores that control-plane classes name (etcd.backup.offHost.store): a directory per store holding endpoint, bucket, region, prefix, access-key-id, secret-access-key and recipients (a mounted Secret each, read at every host sync), and identity (age identities that open its backups, read only when an EtcdRestore restores one, never copied to a host); without it no backup leaves a host",
    )
    .option(
      "--sops-age-key-file <file>",
      "age identities (as age-keygen writes them) that open the fleet's sops-encrypted Secrets at sync; without it such Secrets are reported, never applied",
    )
    .addOption(
      new Option("--controller-id <id>", "names this controller in the Gitfleet-Controller trailer").default(
        `gitfleet@${hostname()}`,
        "gitfleet@<host name>",
      ),
    )
    .option("--log-level <level>", "trace, debug, info, warn or error", "info");
}
