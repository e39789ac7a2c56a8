import type { Logger } from "pino";
import type { ControllerHooks } from "../controller/build-controller.js";
import { CommitStatuses } from "../controller/commit-statuses.js";
import type { Reconciler } from "../controller/reconciler.js";
import type { Forge } from "../forge/forge.js";
import type { FleetRepo } from "../git/fleet-repo.js";
import { statusCommitChange } from "../git/status-commit-change.js";
import { Notifier } from "../notify/notifier.js";
import { CliError, ExitCode } from "./exit-codes.js";
import { type ForgeFlags, forgeFromFlags } from "./forge-flags.js";
import type { GitAuthFlags } from "./git-auth.js";
import type { ControllerEndpoints } from "./serve-controller.js";

/** What `gitfleet run` tells the world besides the status branch: the flags below. */
export interface OutboundFlags extends Partial<ForgeFlags> {
  readonly commitStatus?: boolean;
  readonly commitStatusContext?: string;
  readonly dashboardUrl?: string;
  readonly notificationSecretsDir?: string;
}

/**
 * The controller's outbound side: commit statuses on the source commits it reconciles
 * (--commit-status) and notifications of the events its status commits record (fleet.yaml's
 * spec.notifications). Both hang off the controller's hooks and never hold up its loop; their queues
 * are in the metrics.
 */
export class Outbound {
  private readonly statuses: CommitStatuses | undefined;
  private readonly notifier: Notifier;
  private reconciler: Reconciler | undefined;

  constructor(
    flags: OutboundFlags & GitAuthFlags,
    context: { readonly repo: FleetRepo; readonly logger: Logger; readonly endpoints: ControllerEndpoints },
  ) {
    const { repo, logger, endpoints } = context;
    if (flags.dashboardUrl !== undefined && !/^https?:\/\//.test(flags.dashboardUrl))
      throw new CliError("--dashboard-url is an http(s) URL", ExitCode.Usage);
    const forge = flags.commitStatus || flags.forge ? forgeOf(flags, repo) : undefined;
    this.statuses =
      flags.commitStatus && forge
        ? new CommitStatuses({
            forge,
            logger,
            ...(flags.commitStatusContext ? { context: flags.commitStatusContext } : {}),
            ...(flags.dashboardUrl ? { dashboardUrl: flags.dashboardUrl } : {}),
          })
        : undefined;
    this.notifier = new Notifier({
      settings: () => this.reconciler?.snapshot().state.model?.fleet?.spec.notifications,
      readChange: (commit) => statusCommitChange(repo, commit),
      logger,
      ...(flags.notificationSecretsDir ? { secretsDir: flags.notificationSecretsDir } : {}),
      ...(forge ? { forge } : {}),
      ...(flags.dashboardUrl ? { dashboardUrl: flags.dashboardUrl } : {}),
    });
    const statuses = this.statuses;
    endpoints.deliveries.push(() => new Map(statuses ? [["forge-status", statuses]] : []));
    endpoints.deliveries.push(() => this.notifier.stats());
  }

  /** The reconciler whose last valid source commit's fleet.yaml routes the notifications. */
  attach(reconciler: Reconciler): void {
    this.reconciler = reconciler;
  }

  /** The hooks given, and the statuses and notifications told of each tip, reconcile and status commit. */
  hooks(base: ControllerHooks): ControllerHooks {
    const { statuses, notifier } = this;
    return {
      ...base,
      ...(statuses ? { onSource: (commit: string) => statuses.seen(commit) } : {}),
      onCommit: (commit) => {
        base.onCommit?.(commit);
        notifier.committed(commit.oid);
      },
      onReconcile: (result) => {
        base.onReconcile?.(result);
        if (result.report) statuses?.reconciled(result.report);
      },
    };
  }

  stop(): void {
    this.notifier.stop();
  }
}

// The forge the flags or the fleet repo's URL name; its token from its flags, else the Git credentials.
function forgeOf(flags: OutboundFlags & GitAuthFlags, repo: FleetRepo): Forge {
  // The repository's own credentials: one GitHub App token bought for Git and the API alike.
  const credentials = repo.credentials;
  return forgeFromFlags(
    { ...flags, forgeTokenEnv: flags.forgeTokenEnv ?? "GITFLEET_FORGE_TOKEN" },
    { ...(repo.url ? { repoUrl: repo.url } : {}), ...(credentials ? { git: credentials } : {}) },
  );
}
