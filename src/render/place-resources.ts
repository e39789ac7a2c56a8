import { type ClusterFacts, clusterFacts } from "../model/cluster-affinity.js";
import { type InterpreterLookup, indexInterpreters } from "../model/interpreter-index.js";
import { type Json, type JsonMap, valueAt } from "../model/json.js";
import { groupKind, isWorkloadKind, podSpecPath } from "../model/kinds.js";
import { describeResource } from "../model/rules/duplicate-resources.js";
import { indexSelections } from "../model/selection-index.js";
import type { Cluster, FleetModel, Placement, Resource } from "../model/types.js";
import type { Profile } from "../schedule/framework.js";
import { buildProfile, DEFAULT_PROFILE } from "../schedule/profile.js";
import { scheduleWorkload } from "../schedule/schedule.js";
import type { ClusterState, ScheduleDecision } from "../schedule/types.js";
import { findPodReferences } from "./dependents.js";
import type { RenderResult, WorkloadDecision } from "./render-fleet.js";

// Where each resource goes — the first half of rendering: workloads scheduled with their Placement,
// non-workloads on the union of their Placements' clusters, dependents wherever their workloads run.

/** Where one resource goes: replicas per cluster (undefined for kinds without replicas) and the placements. */
export interface Destination {
  readonly clusters: Map<string, number | undefined>;
  readonly placements: Set<string>;
}

/** What placing and rendering read: the model, cluster states and indexes built once per render. */
export interface RenderContext {
  readonly model: FleetModel;
  readonly clusters: readonly ClusterState[];
  readonly facts: ReadonlyMap<string, ClusterFacts>;
  readonly selections: ReturnType<typeof indexSelections>;
  readonly interpreterFor: InterpreterLookup;
  readonly profiles: ReadonlyMap<string, Profile>;
  /** Replicas (1 for objects without replicas) per cluster in the previous render, by identity. */
  readonly previous: ReadonlyMap<string, Readonly<Record<string, number>>>;
}

/** Builds the context once per render; `previous` is the last render, whose placement counts as current. */
export function renderContext(model: FleetModel, previous: RenderResult | undefined): RenderContext {
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
  for (const { identity, cluster } of previous?.objects ?? []) {
    const clusters = placement.get(identity);
    if (clusters) clusters[cluster] = 1;
    else placement.set(identity, { [cluster]: 1 });
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

/** Where a resource goes, and for a workload the scheduling decision behind it; undefined when nothing places it. */
export function placeResource(
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
  const replicas = readReplicas(resource, context.interpreterFor);
  const decision = schedule(context, resource, placement, replicas);
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
    replicas,
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

/** Sends the ConfigMaps, Secrets, PVCs and ServiceAccounts a pod spec references wherever the workload goes. */
export function followDependents(context: RenderContext, destinations: Map<Resource, Destination>): void {
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
  return referencedIdentities(resource, context.interpreterFor).flatMap(
    (identity) => byIdentity.get(identity) ?? [],
  );
}

/**
 * The identities (group/kind/namespace/name) of the ConfigMaps, Secrets, PVCs and ServiceAccounts a
 * workload's pod spec references; none for objects without a pod spec.
 */
export function referencedIdentities(resource: Resource, interpreterFor: InterpreterLookup): string[] {
  const path = podSpecPath(groupKind(resource.group, resource.kind), interpreterFor(resource));
  if (path === undefined) return [];
  const references = findPodReferences(valueAt(resource.object as Json, path));
  const wanted: [string, readonly string[]][] = [
    ["ConfigMap", references.configMaps],
    ["Secret", references.secrets],
    ["PersistentVolumeClaim", references.persistentVolumeClaims],
    ["ServiceAccount", references.serviceAccounts],
  ];
  return wanted.flatMap(([kind, names]) =>
    names.map((name) => identityOf("", kind, resource.namespace, name)),
  );
}

/** The identity of an object across renders: group/kind/namespace/name. */
export function identityOf(group: string, kind: string, namespace: string | undefined, name: string): string {
  return `${group}/${kind}/${namespace ?? ""}/${name}`;
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

/** The value at a path of field names in a JSON value, if there is one. */
