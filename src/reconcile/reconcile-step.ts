import { scaleLines } from "../autoscale/autoscale-step.js";
import { type LoadResult, loadFleet, type ParseCache } from "../load/load-fleet.js";
import { type TeamSourceMounts, withMounts } from "../load/team-sources.js";
import { withControlPlaneVersions } from "../manifests/controlplane/generated-apps.js";
import type { ChartRenders } from "../manifests/helm/chart-request.js";
import type { KustomizeBuilds } from "../manifests/kustomize/built-transfer.js";
import { NO_PLANE_STATES } from "../model/controlplane/hosted-control-plane.js";
import { versionStepProblems } from "../model/controlplane/version-steps.js";
import type { FileTree } from "../model/file-tree.js";
import { compareStrings } from "../model/file-tree.js";
import type { LoadPolicy } from "../model/load-policy.js";
import { type ObservedState, planeStatesOf } from "../model/observed-state.js";
import type { Problem } from "../model/problem.js";
import { CLUSTER_SET_APP } from "../model/service-exports.js";
import type { FleetModel, HostedPlaneStates } from "../model/types.js";
import { quotaProblems } from "../plan/quota-check.js";
import { replicasUnderAutoscalers } from "../plan/replicas-under-autoscalers.js";
import { FLEET_QUOTAS_APP } from "../render/quota-objects.js";
import { renderFleet } from "../render/render-fleet.js";
import type { RenderResult } from "../render/render-result.js";
import {
  type AppOutput,
  appStatusPath,
  appStatusText,
  clusterStatusPath,
  clusterStatusText,
  SOURCE_STATUS_PATH,
  sourceStatusText,
  unbucketedApp,
} from "../status/status-files.js";
import type { StatusMessage } from "../status/status-message.js";
import { type Affected, ALL, affectedApps, withQuotaNeighbours } from "./affected-apps.js";
import {
  distributionChanges,
  NO_OUTPUT,
  objectChanges,
  objectsOn,
  outputsOf,
  sameOutput,
} from "./app-outputs.js";
import { type ChangeSummary, changeMessage, invalidMessage } from "./commit-message.js";
import { failoverMessage } from "./failover-message.js";
import { controlPlaneEvents, observationMessage } from "./observation-message.js";
import { type ObservationKeys, observationKeys, observationScope } from "./observation-scope.js";
import { onlyParsed, type Recomputed, recomputedBy } from "./recomputed.js";

/** Everything the loop carries from one reconcile to the next; all of it can be rebuilt from Git. */
export interface ReconcileState {
  /** The last source commit reconciled, valid or not. */
  readonly sourceCommit: string | undefined;
  /** The last valid source commit, which rendered/ holds. */
  readonly renderedCommit: string | undefined;
  /** The fleet repo at `renderedCommit` (empty before the first valid commit). */
  readonly tree: FileTree;
  readonly model: FleetModel | undefined;
  readonly render: RenderResult;
  /** Per app, the source commit that last changed what it renders. */
  readonly appCommits: ReadonlyMap<string, string>;
  /** The status branch's files under rendered/ and status/, by path. */
  readonly files: ReadonlyMap<string, string>;
  /** The observations `render` was made with, as keys (undefined: none, or not known since a restart). */
  readonly observationKeys?: ObservationKeys;
  /** The hosted control planes' states `model` was generated with (absent: none, a loaded model). */
  readonly planes?: HostedPlaneStates;
}

/** The state before the first reconcile. */
export const EMPTY_STATE: ReconcileState = {
  sourceCommit: undefined,
  renderedCommit: undefined,
  tree: new Map(),
  model: undefined,
  render: { objects: [], decisions: [], errors: [] },
  appCommits: new Map(),
  files: new Map(),
};

/** One source commit to reconcile. */
export interface ReconcileInput {
  readonly sourceCommit: string;
  /** The fleet repo at `sourceCommit`. */
  readonly tree: FileTree;
  /** Paths that differ between `state.tree` and `tree`, or ALL when unknown (then everything is rendered again). */
  readonly changedPaths: readonly string[] | typeof ALL;
  /** Parsed files kept between reconciles. */
  readonly cache?: ParseCache;
  /** The renders of the tree's Helm charts (loadFleet's third input). */
  readonly charts?: ChartRenders | undefined;
  /** What the operator bounds and allows (loadFleet's fourth input). */
  readonly policy?: LoadPolicy;
  /** The builds of the tree's kustomizations, made off the event loop (loadFleet's fifth input). */
  readonly kustomize?: KustomizeBuilds;
  /** The teams' repositories' files, as the edge fetched them (loadFleet's sixth input). */
  readonly teamSources?: TeamSourceMounts | undefined;
  /** What the members report and the time: cluster conditions and taints, workloads' replicas. */
  readonly observations?: ObservedState;
  /** The key of Secrets' value digests (see render/secrets.ts). */
  readonly secretDigestKey?: Uint8Array;
}

/** The next state, the file changes that take the status branch there (null deletes), and why. */
export interface ReconcileOutcome {
  readonly state: ReconcileState;
  readonly changes: ReadonlyMap<string, string | null>;
  readonly message: StatusMessage;
  readonly valid: boolean;
  readonly problems: readonly Problem[];
  /** The apps rendered again (ALL for a full render). */
  readonly scope: Affected;
  readonly summary: ChangeSummary | undefined;
  /** What this reconcile parsed and rendered again (absent when it rendered nothing). */
  readonly recomputed?: Recomputed;
  /** An observation step that moved no replica: its message only says the status was updated. */
  readonly quiet?: boolean;
}

/**
 * Reconciles one source commit against the state of the last one: load and validate; if invalid,
 * record the problems in status/source.yaml and keep every rendered file as it is; if valid, render
 * again only the apps the change can affect, and derive the rendered/ and status/ files that differ.
 * Pure — the same state and input give the same outcome — and incremental: a one-app change costs
 * the loading of the fleet plus that app, not a full render.
 */
export function reconcileStep(state: ReconcileState, input: ReconcileInput): ReconcileOutcome {
  const loaded = loadFleet(
    input.tree,
    input.cache,
    input.charts,
    input.policy,
    input.kustomize,
    input.teamSources,
  );
  // Where a file is, for what is said at one: the fleet repo's files and the teams' repositories'.
  const files = withMounts(input.tree, input.teamSources);
  if (!loaded.model) return invalidOutcome(state, input, loaded);
  const { model, planes } = effectiveModel(loaded.model, input.observations);
  // A hosted control plane may not step its versions where Kubernetes and etcd cannot follow.
  const steps = versionStepProblems(state.model, model, files, state.planes, planes);
  if (steps.length > 0)
    return invalidOutcome(state, input, {
      ...loaded,
      model: undefined,
      problems: [...loaded.problems, ...steps],
    });
  // A replicas change under an autoscaler is said where it was made; it changes nothing.
  const problems = [...loaded.problems, ...replicasUnderAutoscalers(state.model, model, files)];
  const sourceScope =
    state.model && input.changedPaths !== ALL ? affectedApps(input.changedPaths, state.model, model) : ALL;
  const observed = input.observations
    ? observationScope(
        state.observationKeys,
        observationKeys(model, state.render, input.observations, planes),
      )
    : new Set<string>();
  const scope = withQuotaNeighbours(model, union(sourceScope, observed));
  const derived = tryRender(() =>
    deriveRender(state, model, {
      scope,
      observations: input.observations,
      planes,
      sourceCommit: input.sourceCommit,
      secretDigestKey: input.secretDigestKey,
    }),
  );
  // A commit that cannot be rendered at all is recorded as invalid, once, like one that does not validate.
  if ("failure" in derived)
    return invalidOutcome(state, input, {
      ...loaded,
      model: undefined,
      problems: [...problems, derived.failure],
    });
  const { changes, render } = derived;
  // A commit that grows a namespace past its quota's overall limits is refused, as Karmada's admission does.
  const over = quotaProblems(
    state.model ? { model: state.model, render: state.render } : undefined,
    { model, render },
    files,
  );
  if (over.length > 0)
    return invalidOutcome(state, input, { ...loaded, model: undefined, problems: [...problems, ...over] });
  changes.set(
    SOURCE_STATUS_PATH,
    sourceStatusText({
      sourceCommit: input.sourceCommit,
      renderedCommit: input.sourceCommit,
      valid: true,
      problems,
    }),
  );
  const summary = derived.summary(input.sourceCommit);
  const next: ReconcileState = {
    sourceCommit: input.sourceCommit,
    renderedCommit: input.sourceCommit,
    tree: input.tree,
    model,
    planes,
    render,
    appCommits: derived.appCommits,
    files: state.files,
    ...(derived.keys ? { observationKeys: derived.keys } : {}),
  };
  const outcome = finish(next, changes, changeMessage(summary), { valid: true, problems }, scope, summary);
  return { ...outcome, recomputed: { ...derived.recomputed, files: loaded.parsedFiles } };
}

/**
 * Whether observations (a cluster's condition, a toleration or grace period running out, a watched
 * workload's report) change what the last valid render would give: then `observationStep` is due. Pure.
 */
export function observationsMoved(state: ReconcileState, observations: ObservedState): boolean {
  if (!state.model) return false;
  const scope = observationScope(
    state.observationKeys,
    observationKeys(state.model, state.render, observations, state.planes),
  );
  return scope === ALL || scope.size > 0;
}

/**
 * The observation-driven re-render (failover and autoscaling both commit through it): renders again,
 * with the same valid source commit, what new observations affect: replicas leave
 * clusters whose NoExecute taints have run out of toleration, old replicas go once their replacements
 * are ready, capped clusters give up unschedulable replicas. The commit says what moved and why
 * (`failover: cluster west Unreachable for 75s; web 10 → east +5, north +5`). status/source.yaml is
 * not touched: the loop's position in the source branch does not move. Pure.
 */
export function observationStep(
  state: ReconcileState,
  observations: ObservedState,
  secretDigestKey?: Uint8Array,
): ReconcileOutcome {
  const { model, planes, renderedCommit, derived, next, scope } = rerendered(
    state,
    observations,
    secretDigestKey,
    (model, planes) =>
      observationScope(state.observationKeys, observationKeys(model, state.render, observations, planes)),
  );
  const summary = derived.summary(renderedCommit);
  const failover = failoverMessage({
    model,
    summary,
    before: state.render,
    after: derived.render,
    observations,
  });
  const scaled = scaleLines(state.render.decisions, derived.render.decisions, observations.autoscaled);
  const { message, moved } = observationMessage({
    failover,
    scaled,
    planes: controlPlaneEvents(state.model && { model: state.model, planes: state.planes }, {
      model,
      planes,
    }),
  });
  // The source did not move: its validation stands as status/source.yaml records it.
  const outcome = {
    ...finish(next, derived.changes, message, { valid: true, problems: [] }, scope, summary),
    recomputed: derived.recomputed,
  };
  return moved ? outcome : { ...outcome, quiet: true };
}

/**
 * Renders every app again with the same valid source commit, on top of what the branch recorded: for
 * a state rebuilt from a status branch gitfleet cannot vouch for, whose rendered objects are only
 * compared with, never applied. The outcome's changes are what the branch holds differently. Pure.
 */
export function rerenderStep(
  state: ReconcileState,
  observations: ObservedState,
  secretDigestKey?: Uint8Array,
): ReconcileOutcome {
  const { renderedCommit, derived, next } = rerendered(state, observations, secretDigestKey, () => ALL);
  const summary = derived.summary(renderedCommit);
  const outcome = finish(
    next,
    derived.changes,
    changeMessage(summary),
    { valid: true, problems: [] },
    ALL,
    summary,
  );
  return { ...outcome, recomputed: derived.recomputed };
}

// The state's valid render made again with new observations over the scope they give: the
// effective model, what the render derived, and the state it leaves (its source position unchanged).
function rerendered(
  state: ReconcileState,
  observations: ObservedState,
  secretDigestKey: Uint8Array | undefined,
  scopeOf: (model: FleetModel, planes: HostedPlaneStates) => Affected,
) {
  const effective = state.model && effectiveModel(state.model, observations, state.planes);
  const renderedCommit = state.renderedCommit;
  if (!effective || !renderedCommit) throw new Error("rendering again needs a state with a valid render");
  const { model, planes } = effective;
  const scope = withQuotaNeighbours(model, scopeOf(model, planes));
  const derived = deriveRender(state, model, {
    scope,
    observations,
    planes,
    sourceCommit: undefined,
    secretDigestKey,
  });
  const next: ReconcileState = {
    ...state,
    model,
    planes,
    render: derived.render,
    appCommits: derived.appCommits,
    ...(derived.keys ? { observationKeys: derived.keys } : {}),
  };
  return { model, planes, renderedCommit, derived, next, scope };
}

// The model as it renders: hosted control planes at the states their policies give them (`current`:
// what `model` was generated with), so the sync, which orders a control plane's components by its
// API server's version, sees what the render did.
function effectiveModel(
  model: FleetModel,
  observations: ObservedState | undefined,
  current: HostedPlaneStates | undefined = NO_PLANE_STATES,
): { model: FleetModel; planes: HostedPlaneStates } {
  const planes = planeStatesOf(observations);
  return { model: withControlPlaneVersions(model, planes, current), planes };
}

function union(a: Affected, b: "all" | ReadonlySet<string>): Affected {
  if (a === ALL || b === "all") return ALL;
  return b.size === 0 ? a : new Set([...a, ...b]);
}

// The render, or the problem that says it failed (never the content that made it fail).
function tryRender(render: () => Derived): Derived | { readonly failure: Problem } {
  try {
    return render();
  } catch (error) {
    const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const message = `the commit could not be rendered (${what.split("\n")[0]?.slice(0, 200) ?? ""}); nothing rendered changes until a commit that renders`;
    return {
      failure: { file: ".", line: 1, column: 1, path: "", severity: "error", code: "RENDER_FAILED", message },
    };
  }
}

interface Derived {
  readonly render: RenderResult;
  readonly changes: Map<string, string | null>;
  readonly appCommits: Map<string, string>;
  readonly keys: ObservationKeys | undefined;
  readonly summary: (sourceCommit: string) => ChangeSummary;
  /** What the render computed again (the files are the caller's to count). */
  readonly recomputed: Recomputed;
}

interface DeriveInput {
  readonly scope: Affected;
  readonly observations: ObservedState | undefined;
  /** Stamped on apps whose output changed; undefined keeps each app's own (a failover step). */
  readonly sourceCommit: string | undefined;
  readonly secretDigestKey: Uint8Array | undefined;
  /** The hosted planes' states `model` was generated with. */
  readonly planes: HostedPlaneStates;
}

// Renders the scope and derives the rendered/ and status/ files that differ.
function deriveRender(state: ReconcileState, model: FleetModel, input: DeriveInput): Derived {
  const { scope, observations, sourceCommit } = input;
  const render = renderFleet(model, {
    planes: input.planes,
    previous: state.render,
    ...(scope === ALL ? {} : { scope }),
    observations,
    secretDigestKey: input.secretDigestKey,
  });
  const examined = withGeneratedApps(
    state,
    model,
    scope === ALL ? new Set([...state.appCommits.keys(), ...model.apps.map((a) => a.name)]) : scope,
  );
  const before = outputsOf(state.render, examined);
  const after = outputsOf(render, examined);
  const changes = new Map<string, string | null>();
  const { appCommits, changedApps } = appStatuses({
    state,
    model,
    examined,
    before,
    after,
    changes,
    sourceCommit,
  });
  const clusterCounts = objectChanges(before, after, changes);
  const clusters = scope === ALL ? allClusters(model, state.files) : new Set(clusterCounts.keys());
  const modelClusters = new Set(model.clusters.map((c) => c.metadata.name));
  for (const cluster of clusters)
    changes.set(
      clusterStatusPath(cluster),
      modelClusters.has(cluster) ? clusterStatusText(cluster, objectsOn(render, cluster)) : null,
    );
  return {
    render,
    changes,
    appCommits,
    keys: observations ? observationKeys(model, render, observations, input.planes) : undefined,
    recomputed: recomputedBy(examined, after),
    summary: (commit) => ({
      sourceCommit: commit,
      apps: changedApps.sort(compareStrings),
      clusters: clusterCounts,
      distributions: distributionChanges(before, after, changedApps),
    }),
  };
}

// What every member of the cluster set gets is made from every app's output: whenever service
// discovery is on (or the last render had it), each render may change it.
function withGeneratedApps(
  state: ReconcileState,
  model: FleetModel,
  examined: ReadonlySet<string>,
): ReadonlySet<string> {
  const had = state.render.objects.some((o) => o.app === CLUSTER_SET_APP);
  const quotas =
    model.federatedResourceQuotas.length > 0 || state.render.objects.some((o) => o.app === FLEET_QUOTAS_APP);
  const apps = [
    ...(model.fleet?.spec.serviceDiscovery || had ? [CLUSTER_SET_APP] : []),
    ...(quotas ? [FLEET_QUOTAS_APP] : []),
  ];
  return apps.length > 0 ? new Set([...examined, ...apps]) : examined;
}

interface AppStatusInput {
  readonly state: ReconcileState;
  readonly model: FleetModel;
  readonly examined: ReadonlySet<string>;
  readonly before: ReadonlyMap<string, AppOutput>;
  readonly after: ReadonlyMap<string, AppOutput>;
  readonly changes: Map<string, string | null>;
  /** Stamped on apps whose output changed; undefined keeps each app's own (failover). */
  readonly sourceCommit: string | undefined;
}

// Writes status/apps/<app>.yaml for the examined apps; an app keeps its source commit unless its output changed.
function appStatuses(input: AppStatusInput): { appCommits: Map<string, string>; changedApps: string[] } {
  const { state, examined, before, after, changes } = input;
  const appCommits = new Map(state.appCommits);
  const changedApps: string[] = [];
  const modelApps = new Map(input.model.apps.map((a) => [a.name, a]));
  for (const app of examined) {
    const old = before.get(app) ?? NO_OUTPUT;
    const now = after.get(app) ?? NO_OUTPUT;
    const same = sameOutput(app, old, now);
    if (!same) changedApps.push(app);
    if (!modelApps.has(app)) {
      appCommits.delete(app);
      changes.set(appStatusPath(app), null);
      continue;
    }
    const own = state.appCommits.get(app) ?? input.sourceCommit ?? state.renderedCommit ?? "";
    const commit = same || input.sourceCommit === undefined ? own : input.sourceCommit;
    appCommits.set(app, commit);
    changes.set(appStatusPath(app), appStatusText(app, commit, now, modelApps.get(app)?.builds?.notApplied));
  }
  return { appCommits, changedApps };
}

function invalidOutcome(state: ReconcileState, input: ReconcileInput, loaded: LoadResult): ReconcileOutcome {
  const changes = new Map([
    [
      SOURCE_STATUS_PATH,
      sourceStatusText({
        sourceCommit: input.sourceCommit,
        renderedCommit: state.renderedCommit,
        valid: false,
        problems: loaded.problems,
      }),
    ],
  ]);
  const errors = loaded.problems.filter((p) => p.severity === "error").length;
  const message = invalidMessage(input.sourceCommit, errors, state.renderedCommit);
  const outcome = finish(
    { ...state, sourceCommit: input.sourceCommit },
    changes,
    message,
    { valid: false, problems: loaded.problems },
    new Set(),
    undefined,
  );
  return { ...outcome, recomputed: onlyParsed(loaded.parsedFiles) };
}

// Keeps only the changes that differ from the files the branch has, and applies them to the state.
function finish(
  state: ReconcileState,
  candidates: ReadonlyMap<string, string | null>,
  message: StatusMessage,
  verdict: { readonly valid: boolean; readonly problems: readonly Problem[] },
  scope: Affected,
  summary: ChangeSummary | undefined,
): ReconcileOutcome {
  const changes = new Map<string, string | null>();
  for (const [path, text] of moveUnbucketed(state.files, candidates))
    if ((state.files.get(path) ?? null) !== text) changes.set(path, text);
  const files = new Map(state.files);
  for (const [path, text] of changes) {
    if (text === null) files.delete(path);
    else files.set(path, text);
  }
  // Without unbucketed files before, and none added: none after (the next commit need not look).
  if (allBucketed.has(state.files) && ![...changes.keys()].some((path) => unbucketedApp(path) !== undefined))
    allBucketed.add(files);
  return {
    state: { ...state, files },
    changes,
    message,
    valid: verdict.valid,
    problems: verdict.problems,
    scope,
    summary,
  };
}

// App status files gitfleet wrote before buckets (status/apps/<app>.yaml) move into their buckets
// with the first commit that finds them: as they are, unless this reconcile writes the app anyway.
function moveUnbucketed(
  files: ReadonlyMap<string, string>,
  candidates: ReadonlyMap<string, string | null>,
): ReadonlyMap<string, string | null> {
  if (allBucketed.has(files)) return candidates;
  let moved: Map<string, string | null> | undefined;
  for (const [path, text] of files) {
    const app = unbucketedApp(path);
    if (app === undefined) continue;
    moved ??= new Map(candidates);
    moved.set(path, null);
    const target = appStatusPath(app);
    if (!moved.has(target)) moved.set(target, text);
  }
  if (!moved) allBucketed.add(files);
  return moved ?? candidates;
}

// Status branch file sets known to hold no app status file outside its bucket: a memo, so that a
// commit looks through the branch's files once rather than at every step.
const allBucketed = new WeakSet<ReadonlyMap<string, string>>();

function allClusters(model: FleetModel, files: ReadonlyMap<string, string>): Set<string> {
  const clusters = new Set(model.clusters.map((c) => c.metadata.name));
  for (const path of files.keys()) {
    const match = /^status\/clusters\/(.+)\.yaml$/.exec(path);
    if (match?.[1]) clusters.add(match[1]);
  }
  return clusters;
}
