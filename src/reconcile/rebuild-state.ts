import { asList, asMap, isJsonMap, type JsonMap } from "../apimachinery/json.js";
import { groupKind, isWorkloadKind } from "../apimachinery/kinds.js";
import { standingScaling } from "../autoscale/autoscaling-round.js";
import { clusterHealthSettings, healthTaints, recordedHealth } from "../failover/cluster-health.js";
import type { FailoverRecord } from "../failover/workload-failover.js";
import { compareStrings } from "../model/file-tree.js";
import { identityOf } from "../model/identity.js";
import { indexInterpreters } from "../model/interpreter-index.js";
import { noObservations, type ObservedCondition, type ObservedState } from "../model/observed-state.js";
import { oneLine } from "../model/one-line.js";
import { parseRenderedPath } from "../model/rendered-path.js";
import type { FleetModel, PurgeMode } from "../model/types.js";
import type { RenderedObject, WorkloadDecision } from "../render/render-result.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import { readAutoscalingStatus } from "../status/autoscaling-files.js";
import { appOfStatusPath, clusterStatusPath } from "../status/status-files.js";
import { type ReconcileState, rerenderStep } from "./reconcile-step.js";

/**
 * What the branch holds under rendered/, without reading it: its paths, and whether a path holds a
 * given text (by Git object id). Its objects are never parsed, let alone applied.
 */
export interface BranchRendered {
  readonly paths: readonly string[];
  holds(path: string, text: string): boolean;
}

/** What a status branch gitfleet cannot vouch for gives a rebuild, besides the state read from it. */
export interface RebuildInput {
  /** The state restoreState reads from the branch's status/ files (nothing under rendered/). */
  readonly restored: ReconcileState;
  /** The branch's rendered/ paths, compared with the render by object id. */
  readonly rendered: BranchRendered;
  /** The branch's files under status/ (observed blocks split off): autoscalers' status among them. */
  readonly files: ReadonlyMap<string, string>;
  /** The observed blocks of status/clusters/ files, by path: the conditions recorded there. */
  readonly observed: ReadonlyMap<string, string>;
  readonly now: number;
  readonly secretDigestKey?: Uint8Array | undefined;
}

/**
 * The loop's state rebuilt from a status branch that is not trusted (unsigned, or signed by no
 * trusted key), and the changes that repair the branch. The state's source commit (one the caller
 * verified is the source branch's tip or in its history) is rendered again, every app of it; what
 * the branch holds under rendered/ is only compared with, so whatever a writer of the branch put
 * there is never applied, and whatever differs is written again (or removed) by the next commit.
 * The status files count only as bounded observations of what ran: each workload's previous division
 * and failover record (for workloads and clusters the fleet has), which of the fleet's objects each
 * of its clusters held, the clusters' probed conditions, and the autoscalers' totals within their
 * reviewed bounds. Pure.
 */
export function rebuildState(input: RebuildInput): {
  state: ReconcileState;
  repair: Map<string, string | null>;
} {
  const { restored } = input;
  const model = restored.model;
  if (!model) throw new Error("rebuildState needs the model of the rendered source commit");
  const resources = resourceIndex(model);
  const clusters = new Set(model.clusters.map((c) => c.metadata.name));
  const decisions = recordedDecisions(restored.render.decisions, clusters, resources);
  const sanitized: ReconcileState = {
    ...restored,
    render: { objects: heldObjects(input.rendered.paths, clusters, resources), decisions, errors: [] },
  };
  const outcome = rerenderStep(
    sanitized,
    recordedObservations(input, model, decisions),
    input.secretDigestKey,
  );
  // Every rendered file is a candidate (the branch's were not read): those it already holds are not.
  const repair = new Map<string, string | null>();
  for (const [path, text] of outcome.changes)
    if (!(path.startsWith("rendered/") && text !== null && input.rendered.holds(path, text)))
      repair.set(path, text);
  const rendered = new Set(outcome.state.render.objects.map((o) => o.path));
  for (const path of input.rendered.paths) if (!rendered.has(path)) repair.set(path, null);
  for (const path of strayFiles(outcome.state)) repair.set(path, null);
  const files = new Map(outcome.state.files);
  for (const [path, text] of repair) if (text === null) files.delete(path);
  return { state: { ...outcome.state, files }, repair };
}

/**
 * Which of the fleet's objects each of its clusters held, as the branch's rendered/ paths name them:
 * the presence a render keeps steady (a cordoned cluster keeps what it ran). Only the path is read —
 * the app is the fleet's own for that object — and paths of other clusters or objects are left out.
 */
function heldObjects(
  paths: readonly string[],
  clusters: ReadonlySet<string>,
  resources: ReadonlyMap<string, IndexedResource>,
): RenderedObject[] {
  const objects: RenderedObject[] = [];
  for (const path of paths) {
    const named = parseRenderedPath(path);
    if (!named || !clusters.has(named.cluster)) continue;
    const identity = identityOf(named.group, named.kind, named.namespace, named.name);
    const resource = resources.get(identity);
    if (resource)
      objects.push({ cluster: named.cluster, app: resource.app, path, identity, object: {}, text: "" });
  }
  return objects.sort((a, b) => compareStrings(a.path, b.path));
}

/**
 * Files of a state that nothing it renders or records accounts for: rendered/ files of no rendered
 * object, and status/ files outside the directories gitfleet writes. A branch gitfleet cannot vouch
 * for may hold such files; they are removed.
 */
export function strayFiles(state: ReconcileState): string[] {
  const rendered = new Set(state.render.objects.map((o) => o.path));
  const known = (path: string) =>
    /^status\/(source\.yaml|clusters\/[^/]+\.yaml)$/.test(path) || appOfStatusPath(path) !== undefined;
  return [...state.files.keys()].filter((path) =>
    path.startsWith("rendered/") ? !rendered.has(path) : !known(path),
  );
}

interface IndexedResource {
  readonly app: string;
  readonly workload: boolean;
}

function resourceIndex(model: FleetModel): Map<string, IndexedResource> {
  const interpreterFor = indexInterpreters(model);
  const index = new Map<string, IndexedResource>();
  for (const app of model.apps)
    for (const r of app.resources)
      index.set(identityOf(r.group, r.kind, r.namespace, r.name), {
        app: app.name,
        workload: isWorkloadKind(groupKind(r.group, r.kind), interpreterFor(r)),
      });
  return index;
}

// The workload decisions status/apps/ records, kept only where they name a workload, app and
// clusters of the fleet with whole, non-negative counts: the previous division the render keeps
// steady, and the failover records it continues.
function recordedDecisions(
  recorded: readonly WorkloadDecision[],
  clusters: ReadonlySet<string>,
  resources: ReadonlyMap<string, IndexedResource>,
): WorkloadDecision[] {
  const decisions: WorkloadDecision[] = [];
  for (const workload of recorded) {
    const known = resources.get(workload.identity);
    if (!known?.workload || known.app !== workload.app) continue;
    const counts = countsOn(asMap(asMap(workload.decision as unknown).clusters), clusters);
    if (!counts) continue;
    const failover = failoverRecord(workload.failover, clusters);
    decisions.push({
      identity: workload.identity,
      app: workload.app,
      resource: oneLine(String(workload.resource ?? ""), 200),
      placement: oneLine(String(workload.placement ?? ""), 253),
      replicas: Object.values(counts).reduce((a, b) => a + b, 0),
      decision: {
        clusters: counts,
        unschedulable: 0,
        diagnosis: { summary: "", filtered: {}, frozen: {}, notSelected: {}, selected: Object.keys(counts) },
      },
      ...(failover ? { failover } : {}),
    });
  }
  return decisions;
}

// Per cluster of the fleet, a whole count; undefined when any entry is not one.
function countsOn(map: JsonMap, clusters: ReadonlySet<string>): Record<string, number> | undefined {
  const counts: Record<string, number> = {};
  for (const [cluster, n] of Object.entries(map)) {
    if (!clusters.has(cluster) || typeof n !== "number" || !Number.isInteger(n) || n < 0) return undefined;
    counts[cluster] = n;
  }
  return counts;
}

const PURGE_MODES: readonly PurgeMode[] = ["Gracefully", "Directly", "Never"];
const EPOCH = "1970-01-01T00:00:00.000Z";

// A failover record as status/apps/ writes it, entry by entry checked; undefined when there is none.
function failoverRecord(value: unknown, clusters: ReadonlySet<string>): FailoverRecord | undefined {
  if (!isJsonMap(value)) return undefined;
  const entries = (list: unknown) =>
    asList(list)
      .map(asMap)
      .filter(
        (e) =>
          typeof e.cluster === "string" &&
          clusters.has(e.cluster) &&
          typeof e.replicas === "number" &&
          Number.isInteger(e.replicas) &&
          e.replicas >= 0,
      );
  const time = (t: unknown) => (typeof t === "string" && !Number.isNaN(Date.parse(t)) ? t : undefined);
  return {
    ...(typeof value.placement === "string" ? { placement: value.placement.slice(0, 64) } : {}),
    movedOff: entries(value.movedOff).map((e) => ({
      cluster: String(e.cluster),
      replicas: Number(e.replicas),
      reason: oneLine(String(e.reason ?? ""), 200),
      at: time(e.at) ?? EPOCH,
    })),
    keeping: entries(value.keeping).map((e) => {
      const until = time(e.until);
      return {
        cluster: String(e.cluster),
        replicas: Number(e.replicas),
        purgeMode: PURGE_MODES.find((m) => m === e.purgeMode) ?? "Gracefully",
        ...(until ? { until } : {}),
      };
    }),
    capped: entries(value.capped).map((e) => ({
      cluster: String(e.cluster),
      replicas: Number(e.replicas),
      reason: oneLine(String(e.reason ?? ""), 200),
      until: time(e.until) ?? EPOCH,
    })),
  };
}

// The observations the status branch recorded: each cluster's probed condition (its taints derived
// again, never read), and the autoscalers' totals within their bounds.
function recordedObservations(
  input: RebuildInput,
  model: FleetModel,
  decisions: readonly WorkloadDecision[],
): ObservedState {
  const settings = clusterHealthSettings(model.fleet?.spec);
  const clusters = new Map<string, ObservedCondition>();
  for (const cluster of model.clusters) {
    const name = cluster.metadata.name;
    const block = input.observed.get(clusterStatusPath(name));
    const health = block
      ? recordedHealth(asMap(asMap(parse(block)).observed).condition, settings)
      : undefined;
    if (!health || health.since > input.now) continue;
    clusters.set(name, {
      ready: health.ready,
      ...(health.reason ? { reason: health.reason } : {}),
      since: health.since,
      taints: healthTaints(health, input.now, settings),
    });
  }
  const autoscaling = readAutoscalingStatus(model, input.files, input.now);
  return { ...noObservations(input.now), clusters, ...standingScaling(model, decisions, autoscaling) };
}

function parse(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return readEmittedYaml(text);
  } catch {
    return undefined;
  }
}
