import { asMap, isJsonMap, type JsonMap, setOwn, withValueAt } from "../apimachinery/json.js";
import { groupKind, podSpecPath } from "../apimachinery/kinds.js";
import { DEFAULT_KUBERNETES_MINOR } from "../apimachinery/openapi/kubernetes-schemas.js";
import { type CrdSchemas, crdSchemas, objectViolations } from "../apimachinery/openapi/object-schemas.js";
import { schemaFor } from "../apimachinery/patch/patch-schema.js";
import { resourceForCluster, sourceForCluster } from "../manifests/app-builds.js";
import { withControlPlaneVersions } from "../manifests/controlplane/generated-apps.js";
import type { ClusterFacts } from "../model/cluster-affinity.js";
import { compareStrings } from "../model/file-tree.js";
import { identityOf } from "../model/identity.js";
import { type ObservedState, planeStatesOf } from "../model/observed-state.js";
import { renderedPath } from "../model/rendered-path.js";
import { describeResource } from "../model/rules/duplicate-resources.js";
import type { FleetModel, HostedPlaneStates, Resource } from "../model/types.js";
import { tieBreakOrder } from "../schedule/division/fnv.js";
import { memberHpaObjects } from "./member-hpas.js";
import { applyOverriders } from "./override/apply-overriders.js";
import { type ApplicableRule, applicableRules } from "./override/select-overrides.js";
import {
  type Destination,
  followDependents,
  keepAlongside,
  placeResource,
  type RenderContext,
  renderContext,
} from "./place-resources.js";
import { withQuotas } from "./quota-objects.js";
import type { RenderError, RenderedObject, RenderResult, WorkloadDecision } from "./render-result.js";
import { divideJobCompletions, writeReplicas } from "./replicas.js";
import { redactSecretValues, secretValuesChanged } from "./secrets.js";
import { serializeObject } from "./serialize.js";
import { withClusterSet } from "./service-discovery/cluster-set.js";
import { placeExports, serviceDiscoveryObjects } from "./service-discovery/service-discovery.js";
import { withTracking } from "./tracking.js";

/**
 * Renders a validated fleet: schedules every workload with its highest-priority Placement, sends
 * non-workloads to the union of their Placements' clusters and referenced ConfigMaps, Secrets, PVCs
 * and ServiceAccounts to wherever their workloads run, then per cluster writes the replica count,
 * applies Overrides in order, adds tracking metadata, drops member-owned fields and Secret values,
 * and serializes. `previous` is what the clusters run now (the last render): with it, cordoned,
 * NotReady and tainted clusters keep what they have, and dynamic division stays steady. Pure: the
 * same inputs give byte-identical output.
 *
 * With `scope`, only the apps it names are rendered again and every other app keeps what `previous`
 * has for it — the reconcile loop's incremental render. The caller answers for the scope being
 * closed: every app whose output can differ from `previous` must be in it (see affected-apps.ts).
 */
export function renderFleet(source: FleetModel, options: RenderOptions = {}): RenderResult {
  const { previous, scope } = options;
  // Hosted control planes render at the versions their upgrades' started batches give them.
  const model = withControlPlaneVersions(source, planeStatesOf(options.observations), options.planes);
  const fresh = renderApps(model, options);
  const merged = scope && previous ? mergeOutsideScope(model, previous, fresh, scope) : fresh;
  // What every member of the cluster set gets is made from every app's output, scoped or not.
  // So is each assigned cluster's ResourceQuota, wherever the namespace is.
  return { ...merged, objects: withQuotas(model, withClusterSet(model, merged.objects)) };
}

/** What a render takes besides the model; every field is optional. */
export interface RenderOptions {
  /** What the clusters run now (the last render). */
  readonly previous?: RenderResult | undefined;
  /** Only these apps are rendered again; the others keep what `previous` has. */
  readonly scope?: ReadonlySet<string> | undefined;
  /** What the members report, and the time. */
  readonly observations?: ObservedState | undefined;
  /** The hosted control planes' states `source` was generated with (default: none, as loaded). */
  readonly planes?: HostedPlaneStates | undefined;
  /**
   * The key of the Secrets' value digests (the operator's, never in Git). Default: an empty key —
   * for tests and previews; the controller, `plan` and `render` always pass one.
   */
  readonly secretDigestKey?: Uint8Array | undefined;
}

function renderApps(model: FleetModel, options: RenderOptions): RenderResult {
  const { previous, scope, observations } = options;
  const context = renderContext(model, previous, observations, scope);
  const secretKey = options.secretDigestKey ?? NO_KEY;
  const destinations = new Map<Resource, Destination>();
  const decisions: WorkloadDecision[] = [];
  // 1. Place every resource its Placements select.
  const apps = scope ? model.apps.filter((app) => scope.has(app.name)) : model.apps;
  for (const resource of apps.flatMap((app) => app.resources)) {
    const placed = placeResource(context, resource);
    if (!placed) continue;
    destinations.set(resource, placed.destination);
    if (placed.decision) decisions.push(placed.decision);
  }
  // 2. Dependents follow their workloads; an app's other objects stay where failover keeps its old replicas.
  followDependents(context, destinations);
  keepAlongside(context, destinations, decisions);
  // Exports follow the replicas: a ServiceExport goes where its Service's backends run.
  placeExports(context, destinations);
  if (scope)
    for (const resource of destinations.keys()) if (!scope.has(resource.app)) destinations.delete(resource);
  // 3. Render each resource for each of its clusters; then what exported services give consumers.
  const { objects, errors } = renderDestinations(context, destinations, secretKey);
  const services = serviceDiscoveryObjects(context, destinations, objects);
  objects.push(...services.objects, ...memberHpaObjects(context.model, decisions));
  errors.push(...services.errors);
  objects.sort((a, b) => compareStrings(a.path, b.path));
  return { objects, decisions, errors: errors.sort(compareErrors) };
}

const NO_KEY = new Uint8Array();

function renderDestinations(
  context: RenderContext,
  destinations: ReadonlyMap<Resource, Destination>,
  secretKey: Uint8Array,
): { objects: RenderedObject[]; errors: RenderError[] } {
  const objects: RenderedObject[] = [];
  const errors: RenderError[] = [];
  const apps = new Map(context.model.apps.map((app) => [app.name, app]));
  for (const [resource, destination] of destinations) {
    const completions = jobCompletions(resource, destination);
    const app = apps.get(resource.app);
    for (const [cluster, replicas] of destination.clusters) {
      const facts = context.facts.get(cluster) as ClusterFacts;
      // A built app (kustomize, Helm) sends each cluster what its target's build made.
      const body = resourceForCluster(app, resource, facts);
      if (!body) continue;
      const rendered = renderForCluster(context, {
        resource: body,
        cluster,
        replicas,
        completions: completions.get(cluster),
        placements: destination.placements,
        podsToDelete: destination.podsToDelete?.[cluster],
        ordinalStart: destination.ordinals?.[cluster],
        labels: destination.labels?.[cluster],
        secretKey,
      });
      if ("error" in rendered) errors.push(rendered.error);
      else objects.push(withSource(rendered, sourceForCluster(app, facts)));
    }
  }
  return { objects, errors };
}

function withSource(object: RenderedObject, source: string | undefined): RenderedObject {
  return source ? { ...object, source } : object;
}

// The apps outside the scope keep their previous output; the result is ordered as a full render's.
function mergeOutsideScope(
  model: FleetModel,
  previous: RenderResult,
  fresh: RenderResult,
  scope: ReadonlySet<string>,
): RenderResult {
  const outside = <T extends { readonly app: string }>(list: readonly T[]) =>
    list.filter((x) => !scope.has(x.app));
  const appOrder = new Map(model.apps.map((app, index) => [app.name, index]));
  const decisions = [...outside(previous.decisions), ...fresh.decisions].sort(
    (a, b) => (appOrder.get(a.app) ?? -1) - (appOrder.get(b.app) ?? -1),
  );
  return {
    objects: [...outside(previous.objects), ...fresh.objects].sort((a, b) => compareStrings(a.path, b.path)),
    decisions,
    errors: [...outside(previous.errors), ...fresh.errors].sort(compareErrors),
  };
}

/** The order of render errors: by app, resource, cluster and file. */
export function compareErrors(a: RenderError, b: RenderError): number {
  return (
    compareStrings(a.app, b.app) ||
    compareStrings(a.resource, b.resource) ||
    compareStrings(a.cluster, b.cluster) ||
    compareStrings(a.file, b.file)
  );
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

function hasOrdinals(object: JsonMap): boolean {
  const spec = object.spec;
  return typeof spec === "object" && spec !== null && "ordinals" in spec;
}

// The labels a failover carried here, on the workload's own metadata (after Overrides: they win).
function withLabels(object: JsonMap, labels: Readonly<Record<string, string>> | undefined): JsonMap {
  if (!labels) return object;
  const metadata = asMap(object.metadata);
  return { ...object, metadata: { ...metadata, labels: { ...asMap(metadata.labels), ...labels } } };
}

interface Assignment {
  readonly resource: Resource;
  readonly cluster: string;
  readonly replicas: number | undefined;
  readonly completions: number | undefined;
  readonly placements: ReadonlySet<string>;
  readonly podsToDelete: readonly string[] | undefined;
  /** A divided StatefulSet's first ordinal in this cluster. */
  readonly ordinalStart: number | undefined;
  /** Labels a failover carried to this cluster (statePreservation). */
  readonly labels: Readonly<Record<string, string>> | undefined;
  readonly secretKey: Uint8Array;
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
  // A range starting at 0 is the default: written only where the template names ordinals itself.
  if (assignment.ordinalStart !== undefined && (assignment.ordinalStart > 0 || hasOrdinals(object)))
    object = withValueAt(object, ["spec", "ordinals", "start"], assignment.ordinalStart);
  const overridden = withOverrides(context, resource, cluster, object, podSpecPath(key, interpreter));
  if ("error" in overridden) return overridden;
  object = withLabels(overridden.object, assignment.labels);
  for (const path of interpreter?.spec.retainPaths ?? []) object = withoutPath(object, path.split("."));
  // A targeted scale-down names the pods the member removes (after retainPaths: it is meant to be set).
  const podsPath = interpreter?.spec.podsToDeletePath;
  if (assignment.podsToDelete && podsPath)
    object = withValueAt(object, podsPath.split("."), [...assignment.podsToDelete]);
  object = withTracking(object, resource.app, [...assignment.placements].sort(compareStrings));
  if (key === "/Secret") {
    // The sync applies a Secret's values as the fleet repo writes them, never as an Override made them.
    if (secretValuesChanged(resource.object as JsonMap, object))
      return { error: secretOverridden(resource, cluster) };
    object = redactSecretValues(object, assignment.secretKey);
  }
  const path = renderedPath({
    cluster,
    group: resource.group,
    kind: resource.kind,
    namespace: resource.namespace,
    name: resource.name,
  });
  const identity = identityOf(resource.group, resource.kind, resource.namespace, resource.name);
  return { cluster, app: resource.app, path, identity, object, text: serializeObject(object) };
}

// The Override rules for the object in the cluster, applied in order, and the result checked
// against its schema.
function withOverrides(
  context: RenderContext,
  resource: Resource,
  cluster: string,
  original: JsonMap,
  podPath: readonly string[] | undefined,
): { object: JsonMap } | { error: RenderError } {
  const facts = context.facts.get(cluster) as ClusterFacts;
  let object = original;
  const overridden: { readonly rule: ApplicableRule; readonly object: JsonMap }[] = [];
  for (const rule of applicableRules(resource, facts, context.model.overrides)) {
    const result = applyOverriders(
      { object, podSpecPath: podPath, schema: schemaFor(resource.group, resource.kind) },
      rule.overriders,
    );
    const described = { cluster, app: resource.app, resource: describeResource(resource) };
    if (!result.ok)
      return {
        error: { ...described, file: rule.override.origin.file, rule: rule.ruleIndex, message: result.error },
      };
    if (result.value !== object) overridden.push({ rule, object: result.value as JsonMap });
    object = result.value as JsonMap;
  }
  const invalid = overridden.length > 0 ? invalidOverride(context, overridden) : undefined;
  if (invalid)
    return { error: { cluster, app: resource.app, resource: describeResource(resource), ...invalid } };
  return { object };
}

// An object an Override changed is checked against its schema again: the first rule after which the
// API server would refuse it is an error naming that rule (the object as written already passed).
function invalidOverride(
  context: RenderContext,
  overridden: readonly { readonly rule: ApplicableRule; readonly object: JsonMap }[],
): { file: string; rule: number; message: string } | undefined {
  const minor = context.model.fleet?.spec.kubernetesVersion ?? DEFAULT_KUBERNETES_MINOR;
  const crds = crdSchemasOf(context.model);
  const last = overridden[overridden.length - 1];
  if (!last || (objectViolations(minor, crds, last.object) ?? []).length === 0) return undefined;
  for (const { rule, object } of overridden) {
    const [first, ...more] = objectViolations(minor, crds, object) ?? [];
    if (!first) continue;
    const where = first.path.length > 0 ? `/${first.path.join("/")}: ` : "";
    const others = more.length > 0 ? ` (and ${more.length} more)` : "";
    const message = `after this rule the object is invalid for Kubernetes ${minor}: ${where}${first.message}${others}`;
    return { file: rule.override.origin.file, rule: rule.ruleIndex, message };
  }
  return undefined;
}

const crdsByModel = new WeakMap<FleetModel, CrdSchemas>();
function crdSchemasOf(model: FleetModel): CrdSchemas {
  let crds = crdsByModel.get(model);
  if (!crds) {
    crds = crdSchemas(model.apps.flatMap((app) => app.resources));
    crdsByModel.set(model, crds);
  }
  return crds;
}

function withNamespace(resource: Resource): JsonMap {
  const object = structuredClone(resource.object) as JsonMap;
  if (resource.namespace === undefined) return object;
  return { ...object, metadata: { ...(object.metadata as JsonMap), namespace: resource.namespace } };
}

function withoutPath(object: JsonMap, path: readonly string[]): JsonMap {
  const [head, ...rest] = path;
  if (head === undefined || !Object.hasOwn(object, head)) return object;
  const copy = { ...object };
  const child = copy[head];
  if (rest.length === 0) delete copy[head];
  else if (isJsonMap(child)) setOwn(copy, head, withoutPath(child, rest));
  return copy;
}

function secretOverridden(resource: Resource, cluster: string): RenderError {
  return {
    cluster,
    app: resource.app,
    resource: describeResource(resource),
    file: resource.origin.file,
    message:
      "an Override changed this Secret's values; gitfleet applies Secret values only as the fleet repo writes them (write them in the Secret, or use a Secret per cluster)",
  };
}
