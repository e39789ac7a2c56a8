import type { ClusterFacts } from "../cluster-affinity.js";
import { clusterFacts, matchesClusterAffinity } from "../cluster-affinity.js";
import type { Origin } from "../fleet-object.js";
import { matchesNamePattern, type PathMatcher, pathMatcher } from "../path-patterns.js";
import type { Team } from "../team-types.js";
import type { App, Override, Placement, Resource } from "../types.js";
import type { RuleContext } from "./rule.js";

/**
 * A file a Team's paths match stays within the team's bounds (Argo CD's AppProject): its objects in
 * the team's namespaces, of kinds the team may use (cluster-scoped ones only when listed); its
 * Placements and Overrides select only the team's apps (unless `selectOutside`), and its Placements
 * only the team's clusters. A file two teams match is an error: a file has one owner. Files no team
 * matches are the platform team's.
 */
export function checkTeamBounds(context: RuleContext): void {
  const teams = context.model.teams.map((team) => ({ team, matchers: team.spec.paths.map(pathMatcher) }));
  if (teams.length === 0) return;
  for (const paths of teams) checkPlatformFiles(context, paths);
  const ownerOf = owningTeams(context, teams);
  const owner = (origin: Origin) => ownerOf.get(origin.file);
  const apps = new Map(context.model.apps.map((app) => [app.name, app]));
  for (const resource of context.model.apps.flatMap((app) => app.resources)) {
    const team = owner(resource.origin);
    if (team) checkResource(context, team, resource);
  }
  for (const object of [...context.model.placements, ...context.model.overrides]) {
    const team = owner(object.origin);
    if (!team) continue;
    if (team.spec.selectOutside !== true) checkSelection(context, { team, object, owner, apps });
    if (object.kind === "Placement") checkClusters(context, team, object);
  }
}

interface TeamPaths {
  readonly team: Team;
  readonly matchers: readonly PathMatcher[];
}

// Each file's owning team (undefined: the platform team's); a file two teams match is reported.
function owningTeams(context: RuleContext, teams: readonly TeamPaths[]): Map<string, Team | undefined> {
  const ownerOf = new Map<string, Team | undefined>();
  for (const origin of origins(context)) {
    if (ownerOf.has(origin.file)) continue;
    const matched = teams.filter((t) => t.matchers.some((match) => match(origin.file)));
    ownerOf.set(origin.file, matched[0]?.team);
    if (matched.length > 1) reportOverlap(context, origin.file, matched);
  }
  return ownerOf;
}

// The platform's own files — fleet.yaml, Clusters, Teams, quotas — are never a team's: a team that
// owned its Team file could widen its own bounds.
function checkPlatformFiles(context: RuleContext, { team, matchers }: TeamPaths): void {
  const { model } = context;
  const platform = [
    ...(model.fleet ? [model.fleet.origin.file] : ["fleet.yaml"]),
    ...model.clusters.map((c) => c.origin.file),
    ...model.teams.map((t) => t.origin.file),
    ...model.federatedResourceQuotas.map((q) => q.origin.file),
  ];
  matchers.forEach((match, i) => {
    const owned = platform.find((file) => match(file));
    if (owned)
      context.reporter.report({
        origin: team.origin,
        path: ["spec", "paths", i],
        code: "OUTSIDE_TEAM_BOUNDS",
        message: `it matches ${owned}, a platform file (fleet.yaml, clusters/, teams/ and quotas/ are the platform team's)`,
      });
  });
}

function origins(context: RuleContext): Origin[] {
  const { model } = context;
  return [
    ...model.apps.flatMap((app) => [
      ...app.resources.map((r) => r.origin),
      ...(app.definition ? [app.definition.origin] : []),
    ]),
    ...model.placements.map((p) => p.origin),
    ...model.overrides.map((o) => o.origin),
  ];
}

function reportOverlap(context: RuleContext, file: string, matched: readonly TeamPaths[]): void {
  const [first, second] = matched;
  if (!first || !second) return;
  const index = second.matchers.findIndex((match) => match(file));
  context.reporter.report({
    origin: second.team.origin,
    path: ["spec", "paths", index],
    code: "INVALID_FIELD_COMBINATION",
    message: `${file} is also team ${first.team.metadata.name}'s (${first.team.origin.file}); a file has one owning team`,
  });
}

function checkResource(context: RuleContext, team: Team, resource: Resource): void {
  const name = team.metadata.name;
  const kind = describeKind(resource);
  if (resource.namespace === undefined) {
    if (!kindAllowed(team.spec.clusterScopedKinds ?? [], resource)) {
      context.reporter.report({
        origin: resource.origin,
        path: ["kind"],
        code: "OUTSIDE_TEAM_BOUNDS",
        message: `team ${name} may not hold the cluster-scoped ${kind}: the platform team's files may, or list it in ${team.origin.file} spec.clusterScopedKinds`,
      });
      return;
    }
    if (resource.kind === "Namespace" && resource.group === "")
      checkNamespace(context, team, resource, resource.name);
    return;
  }
  const allowed = team.spec.namespacedKinds;
  if (allowed && !kindAllowed(allowed, resource))
    context.reporter.report({
      origin: resource.origin,
      path: ["kind"],
      code: "OUTSIDE_TEAM_BOUNDS",
      message: `team ${name} may not hold ${kind}: ${team.origin.file} spec.namespacedKinds allows ${allowed.join(", ")}`,
    });
  checkNamespace(context, team, resource, resource.namespace);
}

function checkNamespace(context: RuleContext, team: Team, resource: Resource, namespace: string): void {
  const patterns = team.spec.namespaces ?? [];
  if (patterns.some((pattern) => matchesNamePattern(pattern, namespace))) return;
  const allowed = patterns.length > 0 ? patterns.join(", ") : "none";
  context.reporter.report({
    origin: resource.origin,
    path: resource.kind === "Namespace" ? ["metadata", "name"] : ["metadata", "namespace"],
    code: "OUTSIDE_TEAM_BOUNDS",
    message: `namespace ${namespace} is outside team ${team.metadata.name}'s namespaces (${allowed}; ${team.origin.file})`,
  });
}

// A team's Placement or Override selects only apps whose files the team owns.
function checkSelection(
  context: RuleContext,
  selecting: {
    readonly team: Team;
    readonly object: Placement | Override;
    readonly owner: (origin: Origin) => Team | undefined;
    readonly apps: ReadonlyMap<string, App>;
  },
): void {
  const { team, object, owner, apps } = selecting;
  const { spec } = object;
  const name = team.metadata.name;
  const foreign = (resources: Iterable<Resource>) => [...resources].find((r) => owner(r.origin) !== team);
  if (object.kind === "Override" && spec.apps === undefined && spec.resourceSelectors === undefined) {
    context.reporter.report({
      origin: object.origin,
      path: ["spec"],
      code: "OUTSIDE_TEAM_BOUNDS",
      message: `an Override of team ${name} without spec.apps or spec.resourceSelectors selects every app; name the team's apps`,
    });
    return;
  }
  spec.apps?.forEach((app, i) => {
    const outside = foreign(apps.get(app)?.resources ?? []);
    if (outside)
      context.reporter.report({
        origin: object.origin,
        path: ["spec", "apps", i],
        code: "OUTSIDE_TEAM_BOUNDS",
        message: `app ${app} is not team ${name}'s (${outside.origin.file}); a team's ${object.kind} selects only its own apps unless ${team.origin.file} sets selectOutside`,
      });
  });
  spec.resourceSelectors?.forEach((selector, i) => {
    const outside = foreign(context.selections.matchedBy(selector));
    if (outside)
      context.reporter.report({
        origin: object.origin,
        path: ["spec", "resourceSelectors", i],
        code: "OUTSIDE_TEAM_BOUNDS",
        message: `it selects ${describeKind(outside)} ${outside.name} of ${outside.origin.file}, which is not team ${name}'s; a team's ${object.kind} selects only its own objects unless ${team.origin.file} sets selectOutside`,
      });
  });
}

// A team's Placement may select only the team's clusters.
function checkClusters(context: RuleContext, team: Team, placement: Placement): void {
  const bound = team.spec.clusters;
  if (!bound) return;
  const candidates = context.model.clusters.map(clusterFacts).filter((c) => candidateOf(placement, c));
  const outside = candidates.filter((c) => !matchesClusterAffinity(bound, c)).map((c) => c.name);
  if (outside.length === 0) return;
  const spec = placement.spec;
  const path = spec.overflow
    ? ["spec", "overflow"]
    : spec.clusterAffinity
      ? ["spec", "clusterAffinity"]
      : ["spec"];
  context.reporter.report({
    origin: placement.origin,
    path,
    code: "OUTSIDE_TEAM_BOUNDS",
    message: `Placement ${placement.metadata.name} can select ${outside.join(", ")}, outside team ${team.metadata.name}'s clusters (${team.origin.file} spec.clusters); narrow its clusterAffinity`,
  });
}

function candidateOf(placement: Placement, cluster: ClusterFacts): boolean {
  const { clusterAffinity, overflow } = placement.spec;
  if (overflow) return overflow.tiers.some((tier) => matchesClusterAffinity(tier.clusterAffinity, cluster));
  return clusterAffinity ? matchesClusterAffinity(clusterAffinity, cluster) : true;
}

function kindAllowed(patterns: readonly string[], resource: Resource): boolean {
  return patterns.some((pattern) => {
    if (pattern === "*") return true;
    const slash = pattern.lastIndexOf("/");
    if (slash < 0) return pattern === resource.kind;
    return pattern.slice(0, slash) === resource.group && pattern.slice(slash + 1) === resource.kind;
  });
}

function describeKind(resource: Resource): string {
  return resource.group ? `${resource.kind} (${resource.group})` : resource.kind;
}
