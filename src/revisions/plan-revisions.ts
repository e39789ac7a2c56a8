import { parse } from "yaml";
import { standingScaling } from "../autoscale/autoscaling-round.js";
import { type BuildSettings, configureBuilds } from "../builds/build-settings.js";
import { loadFleetWithBuilds } from "../builds/load-with-builds.js";
import { readTreeAtRevision } from "../git/read-tree.js";
import type { LoadResult } from "../load/load-fleet.js";
import { formatValidationReport } from "../load/summary.js";
import { versionStepProblems } from "../model/controlplane/version-steps.js";
import type { FileTree } from "../model/file-tree.js";
import type { ObservedState } from "../model/observed-state.js";
import type { Problem } from "../model/problem.js";
import type { FleetModel, RestoreOverlay } from "../model/types.js";
import { hostsMovedWithoutRestore } from "../plan/host-moves.js";
import { type HookConflict, type Plan, planChange } from "../plan/plan.js";
import { quotaProblems } from "../plan/quota-check.js";
import { locateInTree, replicasUnderAutoscalers } from "../plan/replicas-under-autoscalers.js";
import { syncTiming } from "../plan/sync-timing.js";
import { recordedGives } from "../policy/registry.js";
import { plannedRestores } from "../policy/restores.js";
import { plannedUpgrades } from "../policy/upgrades.js";
import { gatherObservedState } from "../reconcile/gather-observations.js";
import { restoreState } from "../reconcile/restore-state.js";
import { formatRenderError } from "../render/format-render.js";
import { renderFleet } from "../render/render-fleet.js";
import type { RenderResult } from "../render/render-result.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import { AUTOSCALING_DIRECTORY, readAutoscalingStatus } from "../status/autoscaling-files.js";
import {
  AGENTS_DIRECTORY,
  CLUSTERS_DIRECTORY,
  RESTORES_DIRECTORY,
  UPGRADES_DIRECTORY,
} from "../status/layout.js";
import { splitObserved } from "../status/observed-status.js";
import { recordedClusters } from "../status/recorded-observations.js";
import { SOURCE_STATUS_PATH } from "../status/status-files.js";
import { pruneSettings } from "../sync/desired-objects.js";
import { type InventoryRecord, inventoryFromStatus } from "../sync/inventory.js";
import { planHookConflicts } from "./plan-hooks.js";
import { planMigrations } from "./plan-migrations.js";

export interface PlanRevisionsInput {
  /** A work tree or a bare repository. */
  readonly repo: string;
  readonly base: string;
  readonly head: string;
  /** Where gitfleet records what the clusters run: the base is planned on top of it when it exists. */
  readonly statusBranch: string;
  /** Compare the objects of starting migration batches, and the change's hooks, with what runs (read only). */
  readonly kubeconfig?: string;
  /** With kubeconfig: the directory Clusters' kubeconfigFile names are read from. */
  readonly kubeconfigDir?: string;
  /** The key of Secrets' value digests: both revisions are rendered with it (see render/secrets.ts). */
  readonly secretDigestKey?: Uint8Array;
  /** What the operator set for builds, for a plan's worker thread (the process's own is set with it). */
  readonly build?: BuildSettings;
}

/** A plan, or why there is none: a revision cannot be read, the head is invalid or does not render. */
export type PlanOutcome =
  | { readonly plan: Plan; readonly notes: readonly string[] }
  | { readonly error: string; readonly notes: readonly string[] };

/** Thrown when a revision cannot be read at all. */
export class RevisionError extends Error {
  override readonly name = "RevisionError";
}

const EMPTY: RenderResult = { objects: [], decisions: [], errors: [] };

/**
 * What every cluster gets from going from BASE to HEAD, as `gitfleet plan` and the dashboard's plan
 * view show it: the head rendered on top of what the status branch says runs (failover moves,
 * cordoned clusters, the autoscalers' totals), so the plan is exactly what will happen.
 */
export async function planRevisions(input: PlanRevisionsInput): Promise<PlanOutcome> {
  // A plan's worker thread starts with the defaults: it takes the controller's settings.
  if (input.build) configureBuilds(input.build);
  const [baseTree, headTree] = await Promise.all([
    readRevision(input.repo, input.base),
    readRevision(input.repo, input.head),
  ]);
  // The head must be valid: a plan of an invalid change would promise what cannot be applied.
  const head = await loadFleetWithBuilds(headTree);
  if (!head.model) return { error: formatValidationReport(`${input.repo}@${input.head}`, head), notes: [] };
  const notes: string[] = [];
  const base = await loadFleetWithBuilds(baseTree);
  if (!base.model) notes.push(`the base revision ${input.base} is invalid; planning against an empty fleet`);
  // A version step the hosted control planes cannot take makes the change as invalid as a schema error.
  const steps = versionStepProblems(base.model, head.model, headTree);
  if (steps.length > 0) return invalidHead(input, head, steps, notes);
  const statusTree = await readTreeAtRevision(input.repo, input.statusBranch).catch(() => undefined);
  const running = base.model && statusTree ? statusRender(statusTree, baseTree, base.model) : undefined;
  const { baseRender, headRender, upgrades } = renderRevisions({
    base: base.model,
    head: head.model,
    statusTree,
    running,
    secretDigestKey: input.secretDigestKey,
  });
  const refused = renderProblems(
    input,
    { base, head, model: head.model, headTree, baseRender, headRender },
    notes,
  );
  if (refused) return refused;
  const objectsPlan = planChange(
    baseRender,
    headRender,
    pruneSettings(head.model, headRender.decisions),
    statusTree ? recordedInventories(statusTree) : undefined,
  );
  const migrations = await migrationsAgainstLive(input, base.model, head.model, headRender, statusTree);
  const warnings = [
    ...replicasUnderAutoscalers(base.model, head.model, headTree),
    ...hostsMovedWithoutRestore(base.model, head.model, headTree),
  ];
  // The base's policy: a change cannot loosen the check it is held to.
  const policy = base.model?.fleet?.spec.plan?.unplacedReplicas;
  const withPolicy = policy ? { ...objectsPlan, unplacedPolicy: policy } : objectsPlan;
  const planned = warnings.length > 0 ? { ...withPolicy, warnings } : withPolicy;
  const withMigrations = migrations
    ? { ...planned, migrations, changed: planned.changed || migrations.batches.length > 0 }
    : planned;
  const upgraded =
    upgrades.changes.length > 0
      ? { ...withMigrations, upgrades: upgrades.changes, changed: true }
      : withMigrations;
  const timing = syncTiming(upgraded, head.model, headRender.objects, Date.now());
  const timed = timing.length > 0 ? { ...upgraded, timing } : upgraded;
  const hookConflicts = await hooksAgainstLive(input, head.model, headRender, timed);
  const plan = hookConflicts.length > 0 ? { ...timed, hookConflicts } : timed;
  return { plan, notes };
}

// What the head's render shows the change cannot do: exceed a quota, or render at all.
function renderProblems(
  input: PlanRevisionsInput,
  revisions: {
    readonly base: LoadResult;
    readonly head: LoadResult;
    readonly model: FleetModel;
    readonly headTree: FileTree;
    readonly baseRender: RenderResult;
    readonly headRender: RenderResult;
  },
  notes: string[],
): PlanOutcome | undefined {
  const { base, head, model, headTree, baseRender, headRender } = revisions;
  const over = quotaProblems(
    base.model ? { model: base.model, render: baseRender } : undefined,
    { model, render: headRender },
    headTree,
  );
  if (over.length > 0) return invalidHead(input, head, over, notes);
  if (headRender.errors.length === 0) return undefined;
  const error = headRender.errors
    .map((e) => formatRenderError(e, (at) => locateInTree(headTree, at.origin, at.path)))
    .join("\n");
  return { error, notes };
}

// The head is invalid for what only the change shows (a version step, a quota it exceeds).
function invalidHead(
  input: PlanRevisionsInput,
  head: LoadResult,
  problems: readonly Problem[],
  notes: string[],
): PlanOutcome {
  const report = { ...head, model: undefined, problems: [...head.problems, ...problems] };
  return { error: formatValidationReport(`${input.repo}@${input.head}`, report), notes };
}

// A revision's tree. The revision is named; the repository's path and the library's words are not.
function readRevision(repo: string, rev: string): Promise<FileTree> {
  return readTreeAtRevision(repo, rev).catch((error: unknown) => {
    const unknown = error instanceof Error && error.message.startsWith("unknown revision");
    throw new RevisionError(
      unknown
        ? `unknown revision ${JSON.stringify(rev)}: no such branch, tag or commit`
        : `the revision ${JSON.stringify(rev)} cannot be read`,
    );
  });
}

// The migration batches the change decides; with a kubeconfig, their objects against what runs.
function migrationsAgainstLive(
  input: PlanRevisionsInput,
  base: FleetModel | undefined,
  head: FleetModel,
  render: RenderResult,
  statusTree: FileTree | undefined,
): ReturnType<typeof planMigrations> {
  return planMigrations({
    base,
    head,
    objects: render.objects,
    statusTree,
    ...(input.kubeconfig ? { kubeconfig: input.kubeconfig } : {}),
    ...(input.kubeconfigDir ? { kubeconfigDir: input.kubeconfigDir } : {}),
  }).catch((error: unknown) => {
    throw new RevisionError(
      `cannot compare the migration's objects with what runs: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
}

// With a kubeconfig: the change's hooks that a live object gitfleet did not make stands in the way of.
async function hooksAgainstLive(
  input: PlanRevisionsInput,
  head: FleetModel,
  render: RenderResult,
  plan: Plan,
): Promise<HookConflict[]> {
  if (!input.kubeconfig) return [];
  const sources = {
    kubeconfig: input.kubeconfig,
    ...(input.kubeconfigDir ? { kubeconfigDir: input.kubeconfigDir } : {}),
    env: process.env,
  };
  return planHookConflicts(head, render.objects, plan, sources).catch((error: unknown) => {
    throw new RevisionError(
      `cannot compare the change's hooks with what runs: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
}

interface RevisionRenders {
  readonly base: FleetModel | undefined;
  readonly head: FleetModel;
  readonly statusTree: FileTree | undefined;
  readonly running: RenderResult | undefined;
  readonly secretDigestKey: PlanRevisionsInput["secretDigestKey"];
}

// Both revisions rendered on top of what runs. Totals the autoscalers decided stand: a plan shows the
// change on top of what really runs. Hosted control planes run the versions their upgrades recorded;
// at merge, a batch the change approves starts.
function renderRevisions(input: RevisionRenders): {
  baseRender: RenderResult;
  headRender: RenderResult;
  upgrades: ReturnType<typeof plannedUpgrades>;
} {
  const { base, head, statusTree, running } = input;
  const statusFiles = statusTree ? controlPlaneStatusFiles(statusTree) : new Map<string, string>();
  const planned = plannedUpgrades(head, statusFiles, Date.now());
  const restores = plannedRestores(head, statusFiles, Date.now());
  const upgrades = { ...planned, changes: [...planned.changes, ...restores.changes] };
  const observed = (
    model: FleetModel,
    decisions: RenderResult["decisions"],
    versions: ReadonlyMap<string, string>,
    overlays: ReadonlyMap<string, RestoreOverlay>,
  ) =>
    statusTree
      ? {
          ...recordedObservations(statusTree, model, decisions),
          controlPlaneVersions: versions,
          controlPlaneRestores: overlays,
        }
      : versions.size > 0 || overlays.size > 0
        ? gatherObservedState({
            now: Date.now(),
            controlPlaneVersions: versions,
            controlPlaneRestores: overlays,
          })
        : undefined;
  // What runs: the policies' standing as the branch records it, the same a restarted controller renders with.
  const baseGives = base ? recordedGives({ model: base, files: statusFiles, trusted: true }) : {};
  const baseRender = base
    ? renderFleet(base, {
        previous: running,
        observations: observed(
          base,
          running?.decisions ?? [],
          baseGives.controlPlaneVersions ?? new Map(),
          baseGives.controlPlaneRestores ?? new Map(),
        ),
        secretDigestKey: input.secretDigestKey,
      })
    : EMPTY;
  const headRender = renderFleet(head, {
    previous: baseRender,
    observations: observed(head, baseRender.decisions, upgrades.versions, restores.overlays),
    secretDigestKey: input.secretDigestKey,
  });
  return { baseRender, headRender, upgrades };
}

// status/upgrades/ and status/restores/ as the status branch holds them.
function controlPlaneStatusFiles(tree: FileTree): Map<string, string> {
  const files = new Map<string, string>();
  for (const [path, bytes] of tree)
    if (path.startsWith(UPGRADES_DIRECTORY) || path.startsWith(RESTORES_DIRECTORY))
      files.set(path, new TextDecoder().decode(bytes));
  return files;
}

// Each cluster's inventory as the status branch records it: the prune base tokens are bound to, and
// which objects gitfleet adopted.
function recordedInventories(tree: FileTree): Map<string, InventoryRecord> {
  const inventories = new Map<string, InventoryRecord>();
  for (const [path, bytes] of tree) {
    const cluster = /^status\/inventory\/([^/]+)\.yaml$/.exec(path)?.[1];
    if (!cluster) continue;
    const text = new TextDecoder().decode(bytes);
    try {
      inventories.set(cluster, inventoryFromStatus(readEmittedYaml(text) ?? parse(text)));
    } catch {
      // A file that does not read counts as none: the verdict is the one without it.
    }
  }
  return inventories;
}

// The autoscalers' standing totals and distributions, from status/autoscaling/, and each cluster's
// nodes as status/clusters/ (and the agents' reports) last recorded them.
/** What the status branch recorded that the render takes: the autoscalers' totals and the clusters' nodes. */
export function recordedObservations(
  tree: FileTree,
  model: FleetModel,
  decisions: RenderResult["decisions"],
): ObservedState {
  const files = new Map<string, string>();
  const clusterFiles = new Map<string, string>();
  for (const [path, bytes] of tree) {
    if (path.startsWith(AUTOSCALING_DIRECTORY)) files.set(path, new TextDecoder().decode(bytes));
    if (path.startsWith(CLUSTERS_DIRECTORY) || path.startsWith(AGENTS_DIRECTORY))
      clusterFiles.set(path, new TextDecoder().decode(bytes));
  }
  const now = Date.now();
  return gatherObservedState({
    now,
    ...recordedClusters(clusterFiles),
    scaling: standingScaling(model, decisions, readAutoscalingStatus(model, files, now)),
  });
}

// What the status branch says the clusters run, when the repository has one: cordoned clusters keep
// their replicas, failover's moves and kept replicas hold — so the plan is exactly what will happen.
function statusRender(tree: FileTree, baseTree: FileTree, model: FleetModel): RenderResult | undefined {
  const files = new Map<string, string>();
  for (const [path, bytes] of tree)
    if (path.startsWith("rendered/") || path.startsWith("status/apps/") || path === SOURCE_STATUS_PATH)
      files.set(path, splitObserved(new TextDecoder().decode(bytes)).base);
  return restoreState(files, baseTree, model).render;
}
