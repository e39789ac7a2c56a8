import type { JsonMap } from "../apimachinery/json.js";
import { guessResource } from "../apimachinery/kinds.js";
import { compareStrings } from "../model/file-tree.js";
import type { Team } from "../model/team-types.js";
import type { FleetModel } from "../model/types.js";
import type { DesiredObject } from "./desired-objects.js";
import { TEAM_ACCOUNT_NAMESPACE, TEAM_LABEL, teamAccountName } from "./team-users.js";

/**
 * The last line of defence of a team's bounds, as Flux's multi-tenancy lockdown draws it: in every
 * member, each team has a ServiceAccount whose RBAC is the team's bounds (its namespaced kinds in the
 * namespaces its objects use there, its cluster-scoped kinds if listed, nothing else), and the
 * team's objects are applied impersonating it — so even an object validation let through is refused
 * by the member's own API server.
 */

/**
 * What each team whose objects a member is to hold needs there to apply them as itself: its
 * ServiceAccount; a ClusterRole of its namespaced kinds bound by a RoleBinding in each namespace its
 * objects use in this member; and, when the team may hold cluster-scoped kinds, a ClusterRole of
 * those bound cluster-wide. Sorted by team, then as listed. Pure.
 */
export function teamAccessObjects(model: FleetModel, desired: readonly DesiredObject[]): JsonMap[] {
  const namespaces = new Map<string, Set<string>>();
  for (const object of desired) {
    const team = object.team;
    if (!team) continue;
    const used = namespaces.get(team) ?? new Set<string>();
    const namespace = (object.object.metadata as JsonMap | undefined)?.namespace;
    if (typeof namespace === "string") used.add(namespace);
    namespaces.set(team, used);
  }
  const teams = new Map(model.teams.map((t) => [t.metadata.name, t]));
  return [...namespaces.keys()].sort(compareStrings).flatMap((name) => {
    const team = teams.get(name);
    return team ? accessOf(team, [...(namespaces.get(name) ?? [])].sort(compareStrings)) : [];
  });
}

function accessOf(team: Team, namespaces: readonly string[]): JsonMap[] {
  const name = teamAccountName(team.metadata.name);
  const metadata = (extra: JsonMap = {}) => ({
    name,
    labels: { "app.kubernetes.io/managed-by": "gitfleet", [TEAM_LABEL]: team.metadata.name },
    ...extra,
  });
  const subject = { kind: "ServiceAccount", name, namespace: TEAM_ACCOUNT_NAMESPACE };
  const rbac = "rbac.authorization.k8s.io/v1";
  const objects: JsonMap[] = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: metadata({ namespace: TEAM_ACCOUNT_NAMESPACE }) },
    {
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: metadata(),
      rules: rulesOf(team.spec.namespacedKinds ?? ["*"]),
    },
    ...namespaces.map((namespace) => ({
      apiVersion: rbac,
      kind: "RoleBinding",
      metadata: metadata({ namespace }),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [subject],
    })),
  ];
  const clusterScoped = team.spec.clusterScopedKinds ?? [];
  if (clusterScoped.length === 0) return objects;
  const clusterName = `${name}-cluster`;
  return [
    ...objects,
    {
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: metadata({ name: clusterName }),
      rules: rulesOf(clusterScoped),
    },
    {
      apiVersion: rbac,
      kind: "ClusterRoleBinding",
      metadata: metadata({ name: clusterName }),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterName },
      subjects: [subject],
    },
  ];
}

/**
 * Every rule any team's RBAC grants in a member: gitfleet must hold them itself to create the teams'
 * roles (a member refuses a role that grants more than its creator holds).
 */
export function teamGrantRules(model: FleetModel): JsonMap[] {
  const rules = model.teams.flatMap((team) => [
    ...rulesOf(team.spec.namespacedKinds ?? ["*"]),
    ...rulesOf(team.spec.clusterScopedKinds ?? []),
  ]);
  const seen = new Set<string>();
  return rules.filter((rule) => {
    const key = JSON.stringify(rule);
    return !seen.has(key) && seen.add(key) !== undefined;
  });
}

const WRITE_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"];

// RBAC rules from a Team's kind patterns (`Kind`, `group/Kind`, `*`): write access to each.
function rulesOf(patterns: readonly string[]): JsonMap[] {
  if (patterns.includes("*")) return [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }];
  return patterns.map((pattern) => {
    const slash = pattern.lastIndexOf("/");
    const group = slash < 0 ? "*" : pattern.slice(0, slash);
    return { apiGroups: [group], resources: [guessResource(pattern.slice(slash + 1))], verbs: WRITE_VERBS };
  });
}
