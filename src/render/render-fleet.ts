import { type ClusterFacts, clusterFacts } from "../model/cluster-affinity.js";
import { compareStrings } from "../model/file-tree.js";
import { type InterpreterLookup, indexInterpreters } from "../model/interpreter-index.js";
import { groupKind, groupOf, isWorkloadKind, podSpecPath } from "../model/kinds.js";
import { describeResource } from "../model/rules/duplicate-resources.js";
import { indexSelections } from "../model/selection-index.js";
import type { Cluster, FleetModel, Placement, Resource } from "../model/types.js";
import { tieBreakOrder } from "../schedule/division/fnv.js";
import type { Profile } from "../schedule/framework.js";
import { buildProfile, DEFAULT_PROFILE } from "../schedule/profile.js";
import { scheduleWorkload } from "../schedule/schedule.js";
import type { ClusterState, ScheduleDecision } from "../schedule/types.js";
import { findPodReferences } from "./dependents.js";
import { renderedPath } from "./naming.js";
import { applyOverriders } from "./override/apply-overriders.js";
import { applicableRules } from "./override/select-overrides.js";
import { schemaFor } from "./patch/patch-schema.js";
import type { Json } from "./patch/strategic-merge.js";
import { divideJobCompletions, writeReplicas } from "./replicas.js";
import { redactSecretValues } from "./secrets.js";
import { serializeObject } from "./serialize.js";
import { withTracking } from "./tracking.js";

type JsonMap = { [key: string]: Json };

/** One object as one cluster gets it. */
export interface RenderedObject {
  readonly cluster: string;
  readonly app: string;
  /** `rendered/<cluster>/<namespace|_cluster>/<group>.<kind>.<name>.yaml`. */
  readonly path: string;
  readonly object: JsonMap;
  /** The serialized file, byte-stable. */
  readonly text: string;
}

/** Where one workload runs, and why. */
export interface WorkloadDecision {
  /** group/kind/namespace/name: the workload's identity across renders. */
  readonly identity: string;
  readonly app: string;
  readonly resource: string;
  readonly placement: string;
  readonly decision: ScheduleDecision;
}

/** An object that could not be rendered for a cluster, naming the Override file and rule when one failed. */
export interface RenderError {
  readonly cluster: string;
  readonly resource: string;
  readonly file: string;
  readonly rule?: number;
  readonly message: string;
}

/** Everything every cluster gets, sorted by path; the scheduling decisions; and render errors. */
export interface RenderResult {
  readonly objects: readonly RenderedObject[];
  readonly decisions: readonly WorkloadDecision[];
  readonly errors: readonly RenderError[];
}

/** Where one resource goes: replicas per cluster (undefined for kinds without replicas) and the placements. */
interface Destination {
  readonly clusters: Map<string, number | undefined>;
  readonly placements: Set<string>;
}

/**
 * Renders a validated fleet: schedules every workload with its highest-priority Placement, sends
 * non-workloads to the union of their Placements' clusters and referenced ConfigMaps, Secrets, PVCs
 * and ServiceAccounts to wherever their workloads run, then per cluster writes the replica count,
 * applies Overrides in order, adds tracking metadata, drops member-owned fields and Secret values,
 * and serializes. `previous` is what the clusters run now (the last render): with it, cordoned,
 * NotReady and tainted clusters keep what they have, and dynamic division stays steady. Pure: the
 * same inputs give byte-identical output.
 */
export function renderFleet(model: FleetModel, previous?: RenderResult): RenderResult {
  const context = renderContext(model, previous);
  const destinations = new Map<Resource, Destination>();
  const decisions: WorkloadDecision[] = [];
  // 1. Place every resource its Placements select.
  for (const resource of model.apps.flatMap((app) => app.resources)) {
    const placed = placeResource(context, resource);
    if (!placed) continue;
    destinations.set(resource, placed.destination);
    if (placed.decision) decisions.push(placed.decision);
  }
  // 2. Dependents follow their workloads.
  followDependents(context, destinations);
  // 3. Render each resource for each of its clusters.
  const objects: RenderedObject[] = [];
  const errors: RenderError[] = [];
  for (const [resource, destination] of destinations) {
    const completions = jobCompletions(resource, destination);
    for (const [cluster, replicas] of destination.clusters) {
      const rendered = renderForCluster(context, {
        resource,
        cluster,
        replicas,
        completions: completions.get(cluster),
        placements: destination.placements,
      });
      if ("error" in rendered) errors.push(rendered.error);
      else objects.push(rendered);
    }
  }
  objects.sort((a, b) => compareStrings(a.path, b.path));
  return { objects, decisions, errors };
}

interface RenderContext {
  readonly model: FleetModel;
  readonly clusters: readonly ClusterState[];
  readonly facts: ReadonlyMap<string, ClusterFacts>;
  readonly selections: ReturnType<typeof indexSelections>;
  readonly interpreterFor: InterpreterLookup;
  readonly profiles: ReadonlyMap<string, Profile>;
  /** Replicas (1 for objects without replicas) per cluster in the previous render, by identity. */
  readonly previous: ReadonlyMap<string, Readonly<Record<string, number>>>;
}

function renderContext(model: FleetModel, previous: RenderResult | undefined): RenderContext {
  const profiles = new Map<string, Profile>();
  for (const spec of model.fleet?.spec.schedulerProfiles ?? []) {
    const built = buildProfile(spec);
    if (built.ok) profiles.set(spec.name, built.profile);
  }
  return {
    model,
    clusters: model.clusters.map(clusterState),
    facts: new Map(model.clusters.map((c) => [c.metadata.name, clusterFacts(c)])),
    selections: indexSelections(model),
    interpreterFor: indexInterpreters(model),
    profiles,
    previous: previousPlacement(previous),
  };
}

// What each object had per cluster last time: a workload's replicas, or presence for other objects.
function previousPlacement(previous: RenderResult | undefined): Map<string, Record<string, number>> {
  const placement = new Map<string, Record<string, number>>();
  for (const object of previous?.objects ?? []) {
    const metadata = object.object.metadata as { name?: string; namespace?: string };
    const identity = identityOf(
      groupOf(String(object.object.apiVersion)),
      String(object.object.kind),
      metadata.namespace,
      String(metadata.name),
    );
    placement.set(identity, { ...placement.get(identity), [object.cluster]: 1 });
  }
  for (const decision of previous?.decisions ?? [])
    placement.set(decision.identity, { ...decision.decision.clusters });
  return placement;
}

// Without observations (this render reads only the repo), every cluster counts as Ready with unknown capacity.
function clusterState(cluster: Cluster): ClusterState {
  const drainTaint = cluster.spec.drain ? [{ key: "gitfleet.io/drain", effect: "NoExecute" as const }] : [];
  return {
    ...clusterFacts(cluster),
    taints: [...(cluster.spec.taints ?? []), ...drainTaint],
    unschedulable: cluster.spec.unschedulable === true,
    ready: true,
  };
}

function placeResource(
  context: RenderContext,
  resource: Resource,
): { destination: Destination; decision?: WorkloadDecision } | undefined {
  const placements = context.selections.placementsOf(resource);
  if (placements.length === 0) return undefined;
  const key = groupKind(resource.group, resource.kind);
  if (!isWorkloadKind(key, context.interpreterFor(resource))) {
    const clusters = new Map<string, number | undefined>();
    for (const placement of placements)
      for (const name of schedule(context, resource, placement, 0).diagnosis.selected)
        clusters.set(name, undefined);
    return { destination: { clusters, placements: new Set(placements.map((p) => p.metadata.name)) } };
  }
  // Validation rejects ties at the top priority, so the first of the highest is the only one.
  const placement = [...placements].sort(
    (a, b) => (b.spec.priority ?? 0) - (a.spec.priority ?? 0),
  )[0] as Placement;
  const decision = schedule(context, resource, placement, readReplicas(resource, context.interpreterFor));
  const divided =
    placement.spec.replicaScheduling !== undefined &&
    (placement.spec.replicaScheduling.type ?? "Divided") === "Divided";
  const clusters = new Map<string, number | undefined>();
  for (const name of decision.diagnosis.selected) {
    const count = decision.clusters[name] ?? 0;
    if (!divided || count > 0) clusters.set(name, count);
  }
  const workload = {
    identity: identityOf(resource.group, resource.kind, resource.namespace, resource.name),
    app: resource.app,
    resource: describeResource(resource),
    placement: placement.metadata.name,
    decision,
  };
  return { destination: { clusters, placements: new Set([placement.metadata.name]) }, decision: workload };
}

function schedule(
  context: RenderContext,
  resource: Resource,
  placement: Placement,
  replicas: number,
): ScheduleDecision {
  const metadata = resource.object.metadata as JsonMap;
  const template = podTemplateOf(resource, context.interpreterFor);
  const uid = typeof metadata.uid === "string" ? metadata.uid : "";
  const profile = context.profiles.get(placement.spec.schedulerProfile ?? "") ?? DEFAULT_PROFILE;
  const result = scheduleWorkload(
    {
      workload: {
        apiVersion: resource.apiVersion,
        kind: resource.kind,
        name: resource.name,
        uid,
        ...(resource.namespace ? { namespace: resource.namespace } : {}),
        ...(template ? { podTemplate: template } : {}),
      },
      replicas,
      placement: placement.spec,
      clusters: context.clusters,
      current:
        context.previous.get(identityOf(resource.group, resource.kind, resource.namespace, resource.name)) ??
        {},
    },
    profile,
  );
  // Plugin errors come from invalid input, which validation has already rejected.
  if (!result.ok) throw new Error(`scheduling ${describeResource(resource)}: ${result.error}`);
  return result.decision;
}

function followDependents(context: RenderContext, destinations: Map<Resource, Destination>): void {
  const byIdentity = new Map(
    context.model.apps
      .flatMap((app) => app.resources)
      .map((r) => [identityOf(r.group, r.kind, r.namespace, r.name), r]),
  );
  for (const [resource, destination] of [...destinations]) {
    for (const dependent of dependentsOf(context, resource, byIdentity)) {
      const target = destinations.get(dependent) ?? { clusters: new Map(), placements: new Set<string>() };
      for (const cluster of destination.clusters.keys()) target.clusters.set(cluster, undefined);
      for (const placement of destination.placements) target.placements.add(placement);
      destinations.set(dependent, target);
    }
  }
}

// The ConfigMaps, Secrets, PVCs and ServiceAccounts in the repo that a workload's pod spec references.
function dependentsOf(
  context: RenderContext,
  resource: Resource,
  byIdentity: ReadonlyMap<string, Resource>,
): Resource[] {
  const path = podSpecPath(groupKind(resource.group, resource.kind), context.interpreterFor(resource));
  if (path === undefined) return [];
  const references = findPodReferences(valueAt(resource.object as Json, path));
  const wanted: [string, readonly string[]][] = [
    ["ConfigMap", references.configMaps],
    ["Secret", references.secrets],
    ["PersistentVolumeClaim", references.persistentVolumeClaims],
    ["ServiceAccount", references.serviceAccounts],
  ];
  return wanted.flatMap(([kind, names]) =>
    names.flatMap((name) => byIdentity.get(identityOf("", kind, resource.namespace, name)) ?? []),
  );
}

function identityOf(group: string, kind: string, namespace: string | undefined, name: string): string {
  return `${group}/${kind}/${namespace ?? ""}/${name}`;
}

function jobCompletions(resource: Resource, destination: Destination): Map<string, number> {
  const completions = (resource.object.spec as JsonMap | undefined)?.completions;
  if (
    groupKind(resource.group, resource.kind) !== "batch/Job" ||
    typeof completions !== "number" ||
    destination.clusters.size < 2
  )
    return new Map();
  const parallelism = new Map([...destination.clusters].map(([cluster, count]) => [cluster, count ?? 0]));
  const uid = (resource.object.metadata as JsonMap).uid;
  return divideJobCompletions(completions, parallelism, tieBreakOrder(typeof uid === "string" ? uid : ""));
}

interface Assignment {
  readonly resource: Resource;
  readonly cluster: string;
  readonly replicas: number | undefined;
  readonly completions: number | undefined;
  readonly placements: ReadonlySet<string>;
}

function renderForCluster(
  context: RenderContext,
  assignment: Assignment,
): RenderedObject | { error: RenderError } {
  const { resource, cluster } = assignment;
  const key = groupKind(resource.group, resource.kind);
  const interpreter = context.interpreterFor(resource);
  let object = withNamespace(resource);
  if (assignment.replicas !== undefined)
    object = writeReplicas(object, key, assignment.replicas, interpreter) as JsonMap;
  if (assignment.completions !== undefined)
    object = { ...object, spec: { ...(object.spec as JsonMap), completions: assignment.completions } };
  const facts = context.facts.get(cluster) as ClusterFacts;
  const podPath = podSpecPath(key, interpreter);
  for (const rule of applicableRules(resource, facts, context.model.overrides)) {
    const result = applyOverriders(
      { object, podSpecPath: podPath, schema: schemaFor(resource.group, resource.kind) },
      rule.overriders,
    );
    if (!result.ok) {
      const error = {
        cluster,
        resource: describeResource(resource),
        file: rule.override.origin.file,
        rule: rule.ruleIndex,
        message: result.error,
      };
      return { error };
    }
    object = result.value as JsonMap;
  }
  for (const path of interpreter?.spec.retainPaths ?? []) object = withoutPath(object, path.split("."));
  object = withTracking(object, resource.app, [...assignment.placements].sort(compareStrings));
  if (key === "/Secret") object = redactSecretValues(object);
  const path = renderedPath({
    cluster,
    group: resource.group,
    kind: resource.kind,
    namespace: resource.namespace,
    name: resource.name,
  });
  return { cluster, app: resource.app, path, object, text: serializeObject(object) };
}

function withNamespace(resource: Resource): JsonMap {
  const object = structuredClone(resource.object) as JsonMap;
  if (resource.namespace === undefined) return object;
  return { ...object, metadata: { ...(object.metadata as JsonMap), namespace: resource.namespace } };
}

function readReplicas(resource: Resource, interpreterFor: InterpreterLookup): number {
  const key = groupKind(resource.group, resource.kind);
  const path =
    key === "batch/Job"
      ? ["spec", "parallelism"]
      : (interpreterFor(resource)?.spec.replicasPath?.split(".") ?? ["spec", "replicas"]);
  const value = valueAt(resource.object as Json, path);
  // Kubernetes defaults replicas (and a Job's parallelism) to 1.
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 1;
}

function podTemplateOf(resource: Resource, interpreterFor: InterpreterLookup): Json | undefined {
  const path = podSpecPath(groupKind(resource.group, resource.kind), interpreterFor(resource));
  return path === undefined ? undefined : valueAt(resource.object as Json, path.slice(0, -1));
}

function valueAt(root: Json, path: readonly string[]): Json | undefined {
  let node: Json | undefined = root;
  for (const segment of path) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined;
    node = node[segment];
  }
  return node;
}

function withoutPath(object: JsonMap, path: readonly string[]): JsonMap {
  const [head, ...rest] = path;
  if (head === undefined || !(head in object)) return object;
  const copy = { ...object };
  const child = copy[head];
  if (rest.length === 0) delete copy[head];
  else if (typeof child === "object" && child !== null && !Array.isArray(child))
    copy[head] = withoutPath(child, rest);
  return copy;
}
