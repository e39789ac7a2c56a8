import { asMap } from "../apimachinery/json.js";
import { groupKind } from "../apimachinery/kinds.js";
import { classifyPath } from "../model/classify.js";
import { identityOf } from "../model/identity.js";
import { type InterpreterLookup, indexInterpreters } from "../model/interpreter-index.js";
import { selectsResource } from "../model/resource-selection.js";
import type { FleetModel, Resource } from "../model/types.js";
import { referencedIdentities } from "../render/place-resources.js";

/** Every app must be rendered again. */
export const ALL = "all";

/** The apps whose rendered output a change can alter, or ALL. */
export type Affected = ReadonlySet<string> | typeof ALL;

/**
 * Which apps a change between two valid revisions of the fleet can render differently: an app's own
 * files; the apps a changed Placement or Override selects, before or after the change; every app when
 * a Cluster, a ControlPlaneClass, fleet.yaml or a ResourceInterpreter changes (they feed every scheduling decision); and,
 * closed over, the apps that share ConfigMaps, Secrets, PVCs or ServiceAccounts with an affected app
 * (a dependent goes wherever the workloads that reference it go, across apps); and the apps holding
 * custom resources whose CustomResourceDefinition is in a changed app (it decides their scope).
 *
 * A FederatedResourceQuota changes every app, and a change to an app changes the apps that share a
 * quota's namespace with it (they share its room).
 *
 * A FederatedHPA or CronScale changes every app too (a distributed FederatedHPA renders member HPAs
 * for its target; an autoscaler's mode depends on how its target is scheduled). Migration files
 * change no rendered object; when the renderer starts reading them, they must be added here — the
 * incremental-equals-full property test edits them to catch exactly that. Pure.
 */
export function affectedApps(
  changedPaths: readonly string[],
  before: FleetModel,
  after: FleetModel,
): Affected {
  const affected = new Set<string>();
  for (const path of changedPaths) if (addAffected(affected, path, before, after) === ALL) return ALL;
  addUsersOfChangedCrds(affected, before, after);
  addAppsWithChangedInputs(affected, before, after);
  addQuotaNeighbours(affected, after);
  return closeOverDependents(affected, before, after);
}

/**
 * The scope with every app that shares a FederatedResourceQuota's namespace with an app in it: they
 * share its room, and the render places them again in order (a workload placed after a changed one
 * may get more or less room). For observation-driven renders as well as source changes.
 */
export function withQuotaNeighbours(model: FleetModel, scope: Affected): Affected {
  if (scope === ALL || model.federatedResourceQuotas.length === 0) return scope;
  const affected = new Set(scope);
  addQuotaNeighbours(affected, model);
  return affected;
}

function addQuotaNeighbours(affected: Set<string>, model: FleetModel): void {
  const limited = new Set(model.federatedResourceQuotas.map((q) => q.metadata.namespace));
  if (limited.size === 0) return;
  const appsIn = new Map<string, Set<string>>();
  for (const app of model.apps)
    for (const resource of app.resources)
      if (resource.namespace !== undefined && limited.has(resource.namespace))
        appsIn.set(resource.namespace, (appsIn.get(resource.namespace) ?? new Set()).add(app.name));
  for (const apps of appsIn.values())
    if ([...apps].some((app) => affected.has(app))) for (const app of apps) affected.add(app);
}

function addAffected(affected: Set<string>, path: string, before: FleetModel, after: FleetModel): Affected {
  const role = classifyPath(path);
  if (role.role === "app-definition" || role.role === "manifest") affected.add(role.app);
  if (role.role !== "gitfleet") return affected;
  const kind = path.split("/")[0];
  if (
    kind === "clusters" ||
    kind === "controlplanes" ||
    kind === "interpreters" ||
    kind === "autoscaling" ||
    kind === "quotas" ||
    // A Team's pinned repository lays files anywhere in its paths.
    kind === "teams" ||
    path === "fleet.yaml"
  )
    return ALL;
  if (kind === "placements" || kind === "overrides")
    for (const model of [before, after]) for (const app of appsSelectedFrom(model, path)) affected.add(app);
  return affected;
}

// A built app whose inputs changed outside its own directory (a chart elsewhere in the repo, the
// fleet's capabilities): its input digest says so.
function addAppsWithChangedInputs(affected: Set<string>, before: FleetModel, after: FleetModel): void {
  const digests = new Map(before.apps.map((app) => [app.name, app.builds?.inputDigest]));
  for (const app of after.apps)
    if (app.builds?.inputDigest !== undefined && digests.get(app.name) !== app.builds.inputDigest)
      affected.add(app.name);
}

// A CustomResourceDefinition decides whether its kind is namespaced, for every app that holds one.
function addUsersOfChangedCrds(affected: Set<string>, before: FleetModel, after: FleetModel): void {
  const models = [before, after];
  const crds = models.flatMap((model) =>
    model.apps
      .filter((app) => affected.has(app.name))
      .flatMap((app) => app.resources.filter((r) => r.kind === "CustomResourceDefinition")),
  );
  if (crds.length === 0) return;
  const kinds = new Set(
    crds.map((crd) => {
      const spec = asMap(crd.object.spec);
      return groupKind(String(spec.group), String(asMap(spec.names).kind));
    }),
  );
  for (const app of models.flatMap((model) => model.apps))
    if (app.resources.some((r) => kinds.has(groupKind(r.group, r.kind)))) affected.add(app.name);
}

// The apps whose resources the Placements and Overrides defined in one file select.
function appsSelectedFrom(model: FleetModel, file: string): Set<string> {
  const selections = [...model.placements, ...model.overrides]
    .filter((object) => object.origin.file === file)
    .map((object) => object.spec);
  const apps = new Set<string>();
  if (selections.length === 0) return apps;
  for (const app of model.apps)
    if (
      app.resources.some((resource) => selections.some((selection) => selectsResource(selection, resource)))
    )
      apps.add(app.name);
  return apps;
}

// Adds, until nothing more is added, every app linked to an affected app by a pod reference in
// either revision. References stay inside a namespace, so only the affected apps' namespaces are read.
function closeOverDependents(affected: Set<string>, before: FleetModel, after: FleetModel): Set<string> {
  const links = [before, after].map(referenceLinks);
  let grew = true;
  while (grew) {
    grew = false;
    for (const link of links)
      for (const app of [...affected])
        for (const linked of link(app))
          if (!affected.has(linked)) {
            affected.add(linked);
            grew = true;
          }
  }
  return affected;
}

// For a model, the apps linked to an app: those owning what its workloads reference, and those whose
// workloads reference what it owns.
function referenceLinks(model: FleetModel): (app: string) => ReadonlySet<string> {
  const interpreterFor = indexInterpreters(model);
  const namespaces = new Map<string, Resource[]>();
  for (const resource of model.apps.flatMap((app) => app.resources)) {
    const list = namespaces.get(resource.namespace ?? "");
    if (list) list.push(resource);
    else namespaces.set(resource.namespace ?? "", [resource]);
  }
  const byApp = new Map(model.apps.map((app) => [app.name, app.resources]));
  const memo = new Map<string, ReadonlySet<string>>();
  return (app) => {
    const known = memo.get(app) ?? linksOf(app, byApp.get(app) ?? [], namespaces, interpreterFor);
    memo.set(app, known);
    return known;
  };
}

function linksOf(
  app: string,
  mine: readonly Resource[],
  namespaces: ReadonlyMap<string, readonly Resource[]>,
  interpreterFor: InterpreterLookup,
): Set<string> {
  const linked = new Set<string>();
  const myIdentities = new Set(mine.map((r) => identityOf(r.group, r.kind, r.namespace, r.name)));
  for (const namespace of new Set(mine.map((r) => r.namespace ?? ""))) {
    const neighbours = namespaces.get(namespace) ?? [];
    const owners = new Map(neighbours.map((r) => [identityOf(r.group, r.kind, r.namespace, r.name), r.app]));
    for (const resource of neighbours) {
      const references = referencedIdentities(resource, interpreterFor);
      if (resource.app === app) for (const id of references) linked.add(owners.get(id) ?? app);
      else if (references.some((id) => myIdentities.has(id))) linked.add(resource.app);
    }
  }
  linked.delete(app);
  return linked;
}
