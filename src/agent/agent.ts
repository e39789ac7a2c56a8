import type { Logger } from "pino";
import { defaultBuilders, loadFleetWithBuilds } from "../builds/load-with-builds.js";
import { DEFAULT_STATUS_INTERVAL_MS } from "../controller/fleet-settings.js";
import { wantedSource } from "../controller/reconciler.js";
import type { SopsKeyring } from "../credentials/sops-keyring.js";
import { agentBranch } from "../git/agent-branches.js";
import { beat } from "../git/agent-heartbeat.js";
import type { CommitVerifier } from "../git/commit-verifier.js";
import type { FleetRepo } from "../git/fleet-repo.js";
import { readTreeFiles } from "../git/read-tree.js";
import { publishStatusCommit } from "../git/status-branch.js";
import type { CommitAuthor } from "../git/status-writer.js";
import { syncCluster } from "../kube/cluster-sync.js";
import { detachApp } from "../kube/detach-app.js";
import type { MemberClient } from "../kube/member-client.js";
import { openSecrets } from "../kube/open-secrets.js";
import { CapacityReadings } from "../kube/read-capacity.js";
import { SERVED_APIS_INTERVAL_MS, ServedApiReadings } from "../kube/read-served-apis.js";
import { ensureTeamAccess } from "../kube/team-access.js";
import { createParseCache } from "../load/load-fleet.js";
import { gatesForCluster } from "../migrate/migration-state.js";
import { parseDuration } from "../model/duration.js";
import { indexObjectInterpreters } from "../model/interpreter-index.js";
import { EVENT_TRAILER, SOURCE_COMMIT_TRAILER } from "../model/trailers.js";
import type { FleetModel } from "../model/types.js";
import { statusFromFile } from "../policy/migrations.js";
import { restoreState, sourcePosition } from "../reconcile/restore-state.js";
import type { RenderResult } from "../render/render-result.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import {
  APPS_DIRECTORY,
  MIGRATIONS_DIRECTORY,
  RENDERED_DIRECTORY,
  STATUS_DIRECTORY,
} from "../status/layout.js";
import { migrationStatusPath } from "../status/migration-file.js";
import {
  AGENT_STATUS_CONFIGMAP,
  agentReportPath,
  agentReportText,
  splitObserved,
  syncCommitMessage,
} from "../status/observed-status.js";
import { appStatusDirectory, appStatusPath, SOURCE_STATUS_PATH } from "../status/status-files.js";
import { eventKindOf, messageText } from "../status/status-message.js";
import { desiredByCluster, pruneSettings } from "../sync/desired-objects.js";
import {
  INVENTORY_NAMESPACE,
  type InventoryEntry,
  inventoryFromStatus,
  inventoryPath,
  inventoryStatusText,
} from "../sync/inventory.js";
import { applyGates } from "../sync/migration-gates.js";
import { addControlHolds, controlHolds, dependenciesOf, failoverHere } from "../sync/sync-controls.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";

export interface AgentOptions {
  readonly repo: FleetRepo;
  /** The cluster this agent runs in: it syncs rendered/<cluster>/ and nothing else. */
  readonly cluster: string;
  /** The source branch (the rendered commit's Secrets and policies are read from it). */
  readonly branch: string;
  readonly statusBranch: string;
  /** The agent's own cluster's API. */
  readonly client: MemberClient;
  readonly logger: Logger;
  readonly author: { readonly name: string; readonly email: string };
  /** Commits its report to its own branch; without it (no write access) the report stays in the cluster. */
  readonly push: boolean;
  /**
   * Checks the status branch tip's signature: the agent applies only what a trusted key signed, and
   * refuses anything else (see git/commit-verifier.ts).
   */
  readonly verify: CommitVerifier;
  /** Tries to publish before giving up when other writers keep moving the branch. Default 6. */
  readonly maxAttempts?: number;
  /** The age keys that open the fleet's sops-encrypted Secrets (--sops-age-key-file); without them none is applied. */
  readonly keyring?: SopsKeyring;
}

/** What one round of the agent did. */
export interface AgentRound {
  readonly result: ClusterSyncResult | undefined;
  /**
   * committed: the report is on the agent's branch; unchanged; kept: not pushed (push off or
   * refused); refused: the status branch's tip is not signed by a trusted key, so nothing was applied.
   */
  readonly report: "committed" | "unchanged" | "kept" | "nothing-rendered" | "refused";
  /** Why the round applied nothing (refused). */
  readonly reason?: string;
}

/**
 * Pull mode: runs inside a member, reads rendered/<cluster>/ from the status branch — only from a tip
 * whose signature a trusted key made, refusing anything else — and applies and prunes it with the
 * same code as push mode (syncCluster), so no member credential ever leaves the member. Secret
 * values and the sync policies come from the rendered source commit. Its report — the observed
 * blocks the controller writes for push-mode clusters, and the inventory — is committed to a branch
 * of its own (`<status branch>-agents/<cluster>`: status/agents/<cluster>.yaml and
 * status/inventory/<cluster>.yaml), which the controller reads and validates, and kept in a
 * ConfigMap in its own cluster. The agent never writes the status branch.
 */
export class Agent {
  private fleet: { commit: string; model: FleetModel } | undefined;
  private readonly parseCache = createParseCache();
  private readonly capacities = new CapacityReadings();
  private readonly servedApis = new ServedApiReadings();

  constructor(private readonly options: AgentOptions) {}

  /**
   * One heartbeat on the agent's own heartbeat ref (a parentless commit moved by compare-and-swap),
   * only while its own cluster's API answers /readyz: a beat says "the agent runs and its member
   * answers", and the controller judges the cluster NotReady when the beats stop. False when not
   * pushing or the member does not answer.
   */
  async heartbeat(): Promise<boolean> {
    if (!this.options.push) return false;
    const { repo, statusBranch, cluster, client } = this.options;
    if ((await client.probe()).outcome !== "ready") return false;
    return beat(repo, statusBranch, cluster, this.author());
  }

  /** One round: fetch, sync the cluster to the status branch's tip, report. */
  async round(): Promise<AgentRound> {
    const { repo, cluster, statusBranch, branch, logger } = this.options;
    const own = agentBranch(statusBranch, cluster);
    await repo.fetch([statusBranch, branch, own]);
    const tip = await repo.branchTip(statusBranch);
    if (!tip) return { result: undefined, report: "nothing-rendered" };
    const verdict = await this.options.verify(repo.gitdir, repo.cache, tip);
    if (!verdict.ok) {
      const reason = `the status branch's tip ${tip.slice(0, 7)} is not signed by a trusted key (${verdict.reason}): nothing was applied`;
      logger.error({ cluster, statusCommit: tip }, reason);
      return { result: undefined, report: "refused", reason };
    }
    const files = await this.statusFiles(tip);
    const { renderedCommit } = sourcePosition(files);
    if (!renderedCommit) return { result: undefined, report: "nothing-rendered" };
    const model = await this.modelAt(renderedCommit);
    const objects = restoreState(rendered(files, cluster), new Map(), model).render.objects;
    const ownFiles = await this.ownFiles();
    const inventoryText = ownFiles.get(inventoryPath(cluster));
    const knownInventory = inventoryText
      ? inventoryFromStatus(readEmittedYaml(inventoryText)).inventory
      : new Map<string, InventoryEntry>();
    const leaving = new Set<string>();
    const here = new Set(objects.map((o) => o.identity));
    for (const entry of knownInventory.values()) if (!here.has(entry.identity)) leaving.add(entry.app);
    // Migrations gate the agent's sync as they gate the controller's: from their recorded status.
    const gates = gatesForCluster(cluster, model.migrations, (name) =>
      statusFromFile(files.get(migrationStatusPath(name))),
    );
    const opened = await openSecrets(model, this.options.keyring);
    const gated = applyGates(desiredByCluster(objects, model, opened).get(cluster) ?? [], undefined, gates);
    // Suspends and sync windows hold apps as the controller's syncer holds them.
    let controls = controlHolds(model, cluster, gated.desired, Date.now(), () => "none");
    const windowed = new Set([...controls.apps].filter(([, h]) => h.by === "window").map(([app]) => app));
    if (windowed.size > 0) {
      const decisions = await this.decisionsOf(tip, windowed, model);
      controls = controlHolds(model, cluster, gated.desired, Date.now(), (app) =>
        failoverHere(decisions, knownInventory, app),
      );
    }
    addControlHolds(gated.held, controls.apps);
    for (const app of gated.detach)
      await detachApp({
        cluster,
        client: this.options.client,
        app,
        sourceCommit: renderedCommit,
        knownInventory,
      });
    await ensureTeamAccess(this.options.client, model, gated.desired, this.options.logger);
    const result = await syncCluster({
      cluster,
      client: this.options.client,
      sourceCommit: renderedCommit,
      desired: gated.desired,
      prune: pruneSettings(model, await this.decisionsOf(tip, leaving, model)),
      knownInventory,
      interpreterFor: indexObjectInterpreters(model),
      held: gated.held,
      heldObjects: controls.objects,
      dependsOn: dependenciesOf(model),
      // Its report is committed at most once per status interval: nodes and pods are listed as often.
      capacity: (client, workloads) => this.capacities.read(client, statusIntervalMs(model), workloads),
      served: (client, fresh) => this.servedApis.read(client, SERVED_APIS_INTERVAL_MS, fresh),
    });
    return { result, report: await this.report(result, ownFiles) };
  }

  private async statusFiles(tip: string): Promise<Map<string, string>> {
    const { repo, cluster } = this.options;
    // Its own cluster's rendered tree, where the loop stands, and the migrations' gates.
    const wanted = (path: string) =>
      path === RENDERED_DIRECTORY ||
      path.startsWith(`${RENDERED_DIRECTORY}${cluster}/`) ||
      path === STATUS_DIRECTORY ||
      path === SOURCE_STATUS_PATH ||
      path.startsWith(MIGRATIONS_DIRECTORY);
    const raw = await readTreeFiles(repo.gitdir, repo.cache, await repo.treeOf(tip), wanted);
    return new Map([...raw].map(([path, bytes]) => [path, new TextDecoder().decode(bytes)]));
  }

  // The workload decisions of the apps leaving this cluster, from status/apps/: what failover moved
  // off it is pruned outside the deletion budget, as in push mode.
  private async decisionsOf(
    tip: string,
    apps: ReadonlySet<string>,
    model: FleetModel,
  ): Promise<RenderResult["decisions"]> {
    if (apps.size === 0) return [];
    const { repo } = this.options;
    // Each app's file in its bucket, or where a controller before buckets wrote it.
    const paths = new Set([...apps].flatMap((app) => [appStatusPath(app), `${APPS_DIRECTORY}${app}.yaml`]));
    const directories = new Set([STATUS_DIRECTORY, APPS_DIRECTORY, ...[...apps].map(appStatusDirectory)]);
    const wanted = (path: string) => directories.has(path) || paths.has(path);
    const raw = await readTreeFiles(repo.gitdir, repo.cache, await repo.treeOf(tip), wanted);
    const files = new Map(
      [...raw].map(([path, bytes]) => [path, splitObserved(new TextDecoder().decode(bytes)).base]),
    );
    return restoreState(files, new Map(), model).render.decisions;
  }

  private async modelAt(commit: string): Promise<FleetModel> {
    if (this.fleet?.commit === commit) return this.fleet.model;
    const { repo } = this.options;
    const tree = await repo.treeOf(commit).catch(() => {
      throw new Error(
        `the rendered source commit ${commit.slice(0, 7)} is not in ${repo.describe()}: the agent reads Secret values and sync policies from it (fetch the source branch deeper, or let the controller catch up)`,
      );
    });
    const source = await readTreeFiles(repo.gitdir, repo.cache, tree, wantedSource);
    const { model } = await loadFleetWithBuilds(source, defaultBuilders(), this.parseCache);
    if (!model) throw new Error(`the rendered source commit ${commit.slice(0, 7)} does not validate`);
    this.fleet = { commit, model };
    return model;
  }

  // What the agent's own branch holds: its last report and inventory.
  private async ownFiles(): Promise<Map<string, string>> {
    const { repo, cluster, statusBranch } = this.options;
    const tip = await repo.branchTip(agentBranch(statusBranch, cluster));
    if (!tip) return new Map();
    const wanted = new Set([agentReportPath(cluster), inventoryPath(cluster)]);
    const raw = await readTreeFiles(repo.gitdir, repo.cache, await repo.treeOf(tip), (path) =>
      path.endsWith("/") ? [...wanted].some((w) => w.startsWith(path)) : wanted.has(path),
    );
    return new Map([...raw].map(([path, bytes]) => [path, new TextDecoder().decode(bytes)]));
  }

  // Keeps the report in the cluster, and commits it (with the inventory) to the agent's own branch
  // when it changed (compare and swap, retried on top of a moved tip).
  private async report(
    result: ClusterSyncResult,
    ownFiles: ReadonlyMap<string, string>,
  ): Promise<AgentRound["report"]> {
    const { cluster, client, repo, statusBranch } = this.options;
    const agent = `gitfleet-agent@${cluster}`;
    const text = agentReportText(result, agent);
    await client
      .apply(
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: AGENT_STATUS_CONFIGMAP, namespace: INVENTORY_NAMESPACE },
          data: { report: text },
        },
        true,
      )
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error }, "could not keep the report in the cluster"),
      );
    if (!this.options.push) return "kept";
    const own = agentBranch(statusBranch, cluster);
    const wanted = new Map([[agentReportPath(cluster), text]]);
    if (result.reachable)
      wanted.set(
        inventoryPath(cluster),
        inventoryStatusText(cluster, result.sourceCommit, result.inventory, result.pruneBase),
      );
    let parent = await repo.branchTip(own);
    let current = ownFiles;
    const message = syncCommitMessage([result], { subject: `agent ${cluster}`, kind: "agent" });
    for (let attempt = 1; attempt <= (this.options.maxAttempts ?? 6); attempt++) {
      const changes = new Map([...wanted].filter(([path, value]) => current.get(path) !== value));
      if (changes.size === 0) return "unchanged";
      const published = await publishStatusCommit(repo, {
        branch: own,
        parent,
        changes,
        message: messageText(message),
        trailers: [
          [SOURCE_COMMIT_TRAILER, result.sourceCommit],
          ["Gitfleet-Agent", agent],
          [EVENT_TRAILER, eventKindOf(message)],
        ],
        author: this.author(),
      });
      if (published.status !== "moved") return published.status;
      // Its branch moved (another copy of this agent): write again on the new tip.
      await repo.fetch([own]);
      parent = await repo.branchTip(own);
      current = await this.ownFiles();
    }
    return "kept";
  }

  private author(): CommitAuthor {
    return { ...this.options.author, timestamp: Math.floor(Date.now() / 1000), timezoneOffset: 0 };
  }
}

// The status files restoreState needs for one cluster's rendered objects.
function rendered(files: ReadonlyMap<string, string>, cluster: string): Map<string, string> {
  return new Map(
    [...files].filter(([path]) => path.startsWith(`rendered/${cluster}/`) || path === SOURCE_STATUS_PATH),
  );
}

/** fleet.yaml spec.statusInterval, or its default. */
function statusIntervalMs(model: FleetModel): number {
  const given = model.fleet?.spec.statusInterval;
  return (given && parseDuration(given)) || DEFAULT_STATUS_INTERVAL_MS;
}
