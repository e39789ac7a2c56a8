import { asList, asMap, type Json, type JsonMap, valueAt } from "../apimachinery/json.js";
import { groupKind, isWorkloadKind, podSpecPath } from "../apimachinery/kinds.js";
import {
  type FailoverConstraints,
  failoverConstraints,
  settleFailover,
} from "../failover/workload-failover.js";
import { resourceForCluster } from "../manifests/app-builds.js";
import { type ClusterFacts, clusterFacts } from "../model/cluster-affinity.js";
import { identityOf } from "../model/identity.js";
import { type InterpreterLookup, indexInterpreters } from "../model/interpreter-index.js";
import type { ClusterCapacity, NodePool } from "../model/node-capacity.js";
import type { HeldDivision, ObservedCondition, ObservedState } from "../model/observed-state.js";
import { podTemplateOf } from "../model/pod-template.js";
import { describeResource } from "../model/rules/duplicate-resources.js";
import { indexSelections } from "../model/selection-index.js";
import { type ServedApis, servedKinds } from "../model/served-apis.js";
import { notDivided } from "../model/sync-annotations.js";
import type { App, Cluster, FleetModel, Placement, Resource } from "../model/types.js";
import { readReplicas } from "../model/workload-replicas.js";
import type { Profile } from "../schedule/framework.js";
import { buildProfile, DEFAULT_PROFILE } from "../schedule/profile.js";
import { scheduleWorkload } from "../schedule/schedule.js";
import type { ClusterState, NodeState, QuotaCaps, ScheduleDecision } from "../schedule/types.js";
import { findPodReferences } from "./dependents.js";
import { memberHpasFor } from "./member-hpas.js";
import { statefulOrdinals } from "./ordinals.js";
import { preservedState } from "./preserved-state.js";
import { type PreviousPlacement, previousPlacement } from "./previous-placement.js";
import { countsOf, overQuota, type QuotaLedger, quotaLedger, templatesIn } from "./quota-ledger.js";
import type { RenderResult, WorkloadDecision } from "./render-result.js";

// Where each resource goes — the first half of rendering: workloads scheduled with their Placement,
// non-workloads on the union of their Placements' clusters, dependents wherever their workloads run.

/** Where one resource goes: replicas per cluster (undefined for kinds without replicas) and the placements. */
export interface Destination {
  readonly clusters: Map<string, number | undefined>;
  readonly placements: Set<string>;
  /** Per cluster, pod names for the workload's pods-to-delete field (a targeted scale-down). */
  readonly podsToDelete?: Readonly<Record<string, readonly string[]>>;
  /** Per cluster, a divided StatefulSet's first ordinal (spec.ordinals.start). */
  readonly ordinals?: Readonly<Record<string, number>>;
  /** Per cluster, labels a failover carried there from the cluster the replicas left (statePreservation). */
  readonly labels?: Readonly<Record<string, Readonly<Record<string, string>>>>;
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
  readonly previous: PreviousPlacement;
  /** What the members report, and the time failover decisions are made at. */
  readonly observations: ObservedState | undefined;
  /** Apps whose App says suspend: true. */
  readonly suspendedApps: ReadonlySet<string>;
  /** What the namespaces with a FederatedResourceQuota use, as workloads are placed one by one. */
  readonly quotas: QuotaLedger;
}

/**
 * Builds the context once per render; `previous` is the last render, whose placement counts as
 * current; `observations` add the probed clusters' condition and taints to the Cluster files';
 * `scope`, the apps a scoped render renders again, only says what to index first.
 */
export function renderContext(
  model: FleetModel,
  previous: RenderResult | undefined,
  observations?: ObservedState,
  scope?: ReadonlySet<string>,
): RenderContext {
  const profiles = new Map<string, Profile>();
  for (const spec of model.fleet?.spec.schedulerProfiles ?? []) {
    const built = buildProfile(spec);
    if (built.ok) profiles.set(spec.name, built.profile);
  }
  const interpreterFor = indexInterpreters(model);
  const context: RenderContext = {
    model,
    clusters: model.clusters.map((c) =>
      clusterState(
        c,
        observations?.clusters.get(c.metadata.name),
        observations?.capacity?.get(c.metadata.name),
        observations?.served?.get(c.metadata.name),
      ),
    ),
    facts: new Map(model.clusters.map((c) => [c.metadata.name, clusterFacts(c)])),
    selections: indexSelections(model),
    interpreterFor,
    profiles,
    previous: previousPlacement(previous, scope),
    observations,
    suspendedApps: new Set(model.apps.filter((a) => a.definition?.spec.suspend === true).map((a) => a.name)),
    quotas: quotaLedger(
      model,
      previous?.decisions ?? [],
      templatesIn(model, interpreterFor),
      (app) => !scope || scope.has(app),
    ),
  };
  return observations?.served ? withBroughtApis(context) : context;
}

// A CRD the fleet renders for a cluster makes its kinds served there: the sync applies CRDs first
// and waits for them to be Established, so an app may bring its own API.
function withBroughtApis(context: RenderContext): RenderContext {
  const brought = new Map<string, string[]>();
  const crds = context.model.apps
    .flatMap((app) => app.resources)
    .filter((r) => r.group === "apiextensions.k8s.io" && r.kind === "CustomResourceDefinition");
  for (const crd of crds) {
    const kinds = definedKinds(crd.object as JsonMap);
    for (const cluster of placeResource(context, crd)?.destination.clusters.keys() ?? [])
      brought.set(cluster, [...(brought.get(cluster) ?? []), ...kinds]);
  }
  if (brought.size === 0) return context;
  const clusters = context.clusters.map((c) => {
    const added = brought.get(c.name);
    return added && c.apiEnablements ? { ...c, apiEnablements: [...c.apiEnablements, ...added] } : c;
  });
  return { ...context, clusters };
}

// "group/version/Kind" for each served version of a CRD.
function definedKinds(crd: JsonMap): string[] {
  const spec = asMap(crd.spec);
  const group = typeof spec.group === "string" ? spec.group : "";
  const kind = asMap(spec.names).kind;
  if (!group || typeof kind !== "string") return [];
  return asList(spec.versions)
    .map((v) => asMap(v))
    .filter((v) => v.served !== false && typeof v.name === "string")
    .map((v) => `${group}/${String(v.name)}/${kind}`);
}

// The Cluster file's facts and taints (drain is a NoExecute taint), what the probes observed, and
// the nodes its last capacity reading recorded; a cluster nobody probed counts as Ready, and one
// whose nodes were never read has unknown capacity.
function clusterState(
  cluster: Cluster,
  observed: ObservedCondition | undefined,
  capacity: ClusterCapacity | undefined,
  served: ServedApis | undefined,
): ClusterState {
  const drainTaint = cluster.spec.drain ? [{ key: "gitfleet.io/drain", effect: "NoExecute" as const }] : [];
  return {
    ...clusterFacts(cluster),
    taints: [...(cluster.spec.taints ?? []), ...drainTaint, ...(observed?.taints ?? [])],
    unschedulable: cluster.spec.unschedulable === true,
    ready: observed?.ready ?? true,
    ...(capacity ? { nodes: capacity.pools.map(poolNode) } : {}),
    ...(capacity?.running ? { running: new Map(Object.entries(capacity.running)) } : {}),
    ...(served ? { apiEnablements: [...servedKinds(served)] } : {}),
  };
}

/** A pool of recorded nodes as the estimator takes it: one node, counted `count` times. */
export function poolNode(pool: NodePool): NodeState {
  return {
    allocatable: pool.allocatable,
    free: pool.free,
    labels: pool.labels,
    taints: pool.taints,
    unschedulable: pool.unschedulable,
    ready: pool.ready,
    count: pool.count,
  };
}

const annotationsOf = (resource: Resource) => asMap(asMap(resource.object.metadata as Json).annotations);

/** Where a resource goes, and for a workload the scheduling decision behind it; undefined when nothing places it. */
export function placeResource(
  context: RenderContext,
  resource: Resource,
): { destination: Destination; decision?: WorkloadDecision } | undefined {
  const placements = context.selections.placementsOf(resource);
  if (placements.length === 0) return undefined;
  const key = groupKind(resource.group, resource.kind);
  // Hooks and objects annotated Duplicated run as written in every cluster: never divided, never failed over.
  if (!isWorkloadKind(key, context.interpreterFor(resource)) || notDivided(annotationsOf(resource))) {
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
  return suspendedPlacement(context, resource, placement) ?? placeWorkload(context, resource, placement);
}

// A workload: scheduled with failover's constraints; old replicas failover keeps stay where they are.
function placeWorkload(
  context: RenderContext,
  resource: Resource,
  placement: Placement,
): { destination: Destination; decision: WorkloadDecision } {
  const identity = identityOf(resource.group, resource.kind, resource.namespace, resource.name);
  const autoscaled = context.observations?.autoscaled?.get(identity);
  const replicas = autoscaled?.replicas ?? readReplicas(resource, context.interpreterFor);
  const divided = isDivided(placement);
  const subject = {
    record: context.previous.decision(identity, resource.app)?.failover,
    placement: placement.spec,
    current: context.previous.get(identity, resource.app) ?? {},
    observed: context.observations?.workloads.get(identity) ?? new Map(),
    now: context.observations?.now ?? 0,
    divided,
  };
  const constraints = failoverConstraints(subject);
  const byCapacity = dividesByCapacity(placement);
  const rebalance = byCapacity && !subject.record && provisionalDivision(context, identity, resource.app);
  const template = podTemplateOf(resource, context.interpreterFor);
  const within = { identity, replicas, divided, rebalance, current: subject.current, template };
  let decision = scheduleWithin(context, resource, placement, constraints, within);
  const failover = settleFailover(subject, constraints, decision);
  const held = heldDivision(context, identity, replicas, divided && !failover.record);
  if (held) decision = { ...decision, clusters: { ...held.clusters } };
  if (copiesTemplate(divided, autoscaled)) decision = withOwnCounts(context, resource, decision);
  const clusters = destinationClusters(decision, divided, failover.kept);
  context.quotas.charge(identity, resource.namespace, template, countsOf(clusters));
  const unknown = byCapacity ? unknownCapacity(context, decision) : [];
  const previous = context.previous.decision(identity, resource.app);
  const ordinals = statefulOrdinals(resource, { clusters, replicas, divided, previous: previous?.ordinals });
  const { record, state, labels } = preservedState({
    ...{ placement: placement.spec, record: failover.record, remembered: previous?.state },
    ...{ observed: subject.observed, current: subject.current, decision, now: subject.now },
    destinations: clusters.keys(),
  });
  const workload: WorkloadDecision = {
    identity,
    app: resource.app,
    resource: describeResource(resource),
    placement: placement.metadata.name,
    replicas,
    ...(autoscaled ? { autoscaledBy: autoscaled.by } : {}),
    ...(held ? { scaleDownBy: held.by } : {}),
    decision,
    ...failoverFields({ ...failover, record }),
    ...(unknown.length > 0 ? { capacityUnknown: unknown } : {}),
    ...ordinals,
    ...(state ? { state } : {}),
  };
  return withScaling(context, workload, {
    clusters,
    placements: new Set([placement.metadata.name]),
    ...(held ? { podsToDelete: held.podsToDelete } : {}),
    ...ordinals,
    ...(labels ? { labels } : {}),
  });
}

interface Within {
  readonly identity: string;
  readonly replicas: number;
  readonly divided: boolean;
  readonly rebalance: boolean;
  readonly current: Readonly<Record<string, number>>;
  readonly template: unknown;
}

// Scheduled within failover's constraints and the room the namespace's quotas leave: their overall
// limits bound a divided total (an autoscaler's), their static assignments each cluster.
function scheduleWithin(
  context: RenderContext,
  resource: Resource,
  placement: Placement,
  constraints: FailoverConstraints,
  within: Within,
): ScheduleDecision {
  const { replicas, divided } = within;
  const room = context.quotas.roomFor(within.identity, resource.namespace, within.template);
  const allowed = divided && room ? Math.min(replicas, room.total) : replicas;
  const quota = room?.caps ? { quota: room.caps } : {};
  const rebalance = within.rebalance;
  let decision = schedule(context, resource, placement, allowed, { ...constraints, rebalance, ...quota });
  // Replicas leaving a cluster on a NoExecute taint go to the clusters below their share, and stay.
  if (!constraints.keepCurrent && divided && evicts(decision, within.current))
    decision = schedule(context, resource, placement, allowed, {
      ...constraints,
      keepCurrent: true,
      ...quota,
    });
  return allowed < replicas ? overQuota(decision, replicas - allowed, room?.totalBy) : decision;
}

// A suspended app's (or Placement's) workload keeps the last render's clusters and counts: failover
// and autoscaling do not move it while it is suspended, and its decision says so.
function suspendedPlacement(
  context: RenderContext,
  resource: Resource,
  placement: Placement,
): { destination: Destination; decision: WorkloadDecision } | undefined {
  const app = context.suspendedApps.has(resource.app);
  if (!app && placement.spec.suspend !== true) return undefined;
  const identity = identityOf(resource.group, resource.kind, resource.namespace, resource.name);
  const prior = context.previous.decision(identity, resource.app);
  if (!prior) return undefined;
  const held = app ? "App spec.suspend" : `Placement ${placement.metadata.name} spec.suspend`;
  const clusters = new Map<string, number | undefined>(
    Object.entries(context.previous.get(identity, resource.app) ?? {}),
  );
  return {
    destination: { clusters, placements: new Set([placement.metadata.name]) },
    decision: { ...prior, suspended: `failover and autoscaling held: suspended (${held})` },
  };
}

// What failover adds to a workload's decision: its record, and when it can change next.
function failoverFields(failover: ReturnType<typeof settleFailover>): Partial<WorkloadDecision> {
  return {
    ...(failover.record ? { failover: failover.record } : {}),
    ...(failover.wakeAt !== undefined ? { wakeAt: failover.wakeAt } : {}),
  };
}

// A division made while some clusters' capacity was unknown is made again once it is known.
function provisionalDivision(context: RenderContext, identity: string, app: string): boolean {
  const provisional = context.previous.decision(identity, app)?.capacityUnknown ?? [];
  return provisional.some((name) => capacityKnown(context, name));
}

// The selected clusters whose capacity the division could not count.
function unknownCapacity(context: RenderContext, decision: ScheduleDecision): string[] {
  return decision.diagnosis.selected.filter((name) => !capacityKnown(context, name));
}

// Each cluster runs the count its own template asks for: Duplicated, and no autoscaler sets it.
function copiesTemplate(divided: boolean, autoscaled: unknown): boolean {
  return !divided && autoscaled === undefined;
}

// A built app (kustomize, Helm): a cluster whose target build makes the workload with its own count
// runs that count.
function withOwnCounts(
  context: RenderContext,
  resource: Resource,
  decision: ScheduleDecision,
): ScheduleDecision {
  const app = builtApps(context.model).get(resource.app);
  if (!app) return decision;
  const clusters = Object.fromEntries(
    Object.entries(decision.clusters).map(([cluster, count]) => {
      const body = resourceForCluster(app, resource, context.facts.get(cluster) as ClusterFacts);
      return [cluster, body && body !== resource ? readReplicas(body, context.interpreterFor) : count];
    }),
  );
  return { ...decision, clusters };
}

// The model's built apps (kustomize, Helm) by name, found once per model.
const builtByModel = new WeakMap<FleetModel, ReadonlyMap<string, App>>();
function builtApps(model: FleetModel): ReadonlyMap<string, App> {
  let apps = builtByModel.get(model);
  if (!apps) {
    apps = new Map(model.apps.filter((app) => app.builds).map((app) => [app.name, app]));
    builtByModel.set(model, apps);
  }
  return apps;
}

// Replicas are split across clusters rather than copied to each.
function isDivided(placement: Placement): boolean {
  const scheduling = placement.spec.replicaScheduling;
  return scheduling !== undefined && (scheduling.type ?? "Divided") === "Divided";
}

// Dynamic weights and Aggregated divide by what the clusters can fit.
function dividesByCapacity(placement: Placement): boolean {
  const scheduling = placement.spec.replicaScheduling;
  return (
    scheduling?.divisionPreference === "Aggregated" ||
    scheduling?.weightPreference?.dynamicWeight === "AvailableReplicas"
  );
}

// The cluster's nodes (or a summary) are known: the estimator counts what fits there.
const knownByContext = new WeakMap<RenderContext, ReadonlySet<string>>();
function capacityKnown(context: RenderContext, cluster: string): boolean {
  let known = knownByContext.get(context);
  if (!known) {
    known = new Set(
      context.clusters.filter((c) => c.nodes !== undefined || c.summary !== undefined).map((c) => c.name),
    );
    knownByContext.set(context, known);
  }
  return known.has(cluster);
}

// A workload's member HPAs, when a distributed FederatedHPA scales it.
function withScaling(
  context: RenderContext,
  workload: WorkloadDecision,
  destination: Destination,
): { destination: Destination; decision: WorkloadDecision } {
  const memberHpas = memberHpasFor(context.model, workload, destination.clusters, context.observations);
  return { destination, decision: memberHpas ? { ...workload, memberHpas } : workload };
}

// A targeted scale-down's division: it holds while the total is its own and failover moves nothing.
function heldDivision(
  context: RenderContext,
  identity: string,
  replicas: number,
  holdable: boolean,
): HeldDivision | undefined {
  const held = context.observations?.held?.get(identity);
  return holdable && held?.total === replicas ? held : undefined;
}

// Replicas per selected cluster (a Divided workload's empty clusters left out), and the old replicas
// failover keeps where they are.
function destinationClusters(
  decision: ScheduleDecision,
  divided: boolean,
  kept: Iterable<[string, number]>,
): Map<string, number | undefined> {
  const clusters = new Map<string, number | undefined>();
  for (const name of decision.diagnosis.selected) {
    const count = decision.clusters[name] ?? 0;
    if (!divided || count > 0) clusters.set(name, count);
  }
  for (const [name, count] of kept) clusters.set(name, count);
  return clusters;
}

// A cluster that held replicas was removed by a NoExecute taint.
function evicts(decision: ScheduleDecision, current: Readonly<Record<string, number>>): boolean {
  return Object.entries(current).some(
    ([cluster, count]) => count > 0 && decision.diagnosis.filtered[cluster]?.includes(":NoExecute}"),
  );
}

function schedule(
  context: RenderContext,
  resource: Resource,
  placement: Placement,
  replicas: number,
  failover?: FailoverConstraints & { readonly rebalance?: boolean; readonly quota?: QuotaCaps },
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
        context.previous.get(
          identityOf(resource.group, resource.kind, resource.namespace, resource.name),
          resource.app,
        ) ?? {},
      ...(context.observations ? { now: context.observations.now } : {}),
      ...(failover?.keepCurrent ? { keepCurrent: true } : {}),
      ...(failover?.rebalance ? { rebalance: true } : {}),
      ...(failover && Object.keys(failover.caps).length > 0 ? { caps: failover.caps } : {}),
      ...(failover?.quota ? { quota: failover.quota } : {}),
    },
    profile,
  );
  // Plugin errors come from invalid input, which validation has already rejected.
  if (!result.ok) throw new Error(`scheduling ${describeResource(resource)}: ${result.error}`);
  return result.decision;
}

/** Sends the ConfigMaps, Secrets, PVCs and ServiceAccounts a pod spec references wherever the workload goes. */
export function followDependents(context: RenderContext, destinations: Map<Resource, Destination>): void {
  const byIdentity = possibleDependents(context.model);
  for (const [resource, destination] of [...destinations]) {
    for (const dependent of dependentsOf(context, resource, byIdentity)) {
      const target = destinations.get(dependent) ?? { clusters: new Map(), placements: new Set<string>() };
      for (const cluster of destination.clusters.keys()) target.clusters.set(cluster, undefined);
      for (const placement of destination.placements) target.placements.add(placement);
      destinations.set(dependent, target);
    }
  }
}

/**
 * Where failover keeps an app's old replicas on a cluster, the app's other objects (Services,
 * ConfigMaps, …) that were there stay too, until the old replicas go.
 */
export function keepAlongside(
  context: RenderContext,
  destinations: Map<Resource, Destination>,
  decisions: readonly WorkloadDecision[],
): void {
  const keptByApp = keptClustersByApp(decisions);
  if (keptByApp.size === 0) return;
  const workloads = new Set(decisions.map((d) => d.identity));
  for (const [resource, destination] of destinations) {
    const kept = keptByApp.get(resource.app);
    const identity = identityOf(resource.group, resource.kind, resource.namespace, resource.name);
    if (!kept || workloads.has(identity)) continue;
    const before = context.previous.get(identity, resource.app) ?? {};
    for (const cluster of kept)
      if (before[cluster] !== undefined && !destination.clusters.has(cluster))
        destination.clusters.set(cluster, undefined);
  }
}

function keptClustersByApp(decisions: readonly WorkloadDecision[]): Map<string, Set<string>> {
  const keptByApp = new Map<string, Set<string>>();
  for (const decision of decisions)
    for (const kept of decision.failover?.keeping ?? []) {
      const clusters = keptByApp.get(decision.app) ?? new Set<string>();
      clusters.add(kept.cluster);
      keptByApp.set(decision.app, clusters);
    }
  return keptByApp;
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

// Only the kinds a pod spec refers to can be dependents: the index holds those alone, by identity.
function possibleDependents(model: FleetModel): Map<string, Resource> {
  const byIdentity = new Map<string, Resource>();
  for (const app of model.apps)
    for (const r of app.resources)
      if (r.group === "" && DEPENDENT_KINDS.has(r.kind))
        byIdentity.set(identityOf(r.group, r.kind, r.namespace, r.name), r);
  return byIdentity;
}

/** The kinds (core group) a pod spec refers to by name: what follows a workload. */
const DEPENDENT_KINDS: ReadonlySet<string> = new Set([
  "ConfigMap",
  "Secret",
  "PersistentVolumeClaim",
  "ServiceAccount",
]);

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

/** The value at a path of field names in a JSON value, if there is one. */
