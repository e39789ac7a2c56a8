import type { Logger } from "pino";
import { asMap, type JsonMap } from "../apimachinery/json.js";
import type { FleetModel } from "../model/types.js";
import { IMPLICIT_NAMESPACE_ANNOTATION, MANAGED_BY } from "../render/tracking.js";
import type { DesiredObject } from "../sync/desired-objects.js";
import { teamAccessObjects } from "../sync/team-access.js";
import { TEAM_ACCOUNT_NAMESPACE, TEAM_LABEL, teamUser } from "../sync/team-users.js";
import { addressOf, type MemberClient, message } from "./member-client.js";

/**
 * Before a member syncs its teams' objects: each team's ServiceAccount and RBAC there (what
 * sync/team-access.ts derives from the team's bounds), applied by the controller itself, so that the
 * team's objects can then be applied as the team; what a team no longer needs there (it left the
 * member, or a namespace) is deleted. A failure is logged, and the team's objects then fail on their
 * own with the member's answer.
 */
export async function ensureTeamAccess(
  client: MemberClient,
  model: FleetModel,
  desired: readonly DesiredObject[],
  logger: Logger,
): Promise<void> {
  // A fleet without teams keeps none; what its last Team had here goes, once (one list says whether
  // anything is left).
  if (model.teams.length === 0) {
    if (await anyTeamAccount(client)) await removeStaleAccess(client, new Set(), logger);
    return;
  }
  const objects = teamAccessObjects(model, desired);
  await removeStaleAccess(client, new Set(objects.map(accessKey)), logger);
  if (objects.length === 0) return;
  const labels = { [MANAGED_BY.key]: MANAGED_BY.value };
  const own = { apiVersion: "v1", kind: "Namespace", metadata: { name: TEAM_ACCOUNT_NAMESPACE, labels } };
  // A RoleBinding needs its namespace: the Namespaces this sync is to create for them come first, as
  // the sync would apply them (it applies them again, unchanged, and records them).
  const bound = new Set(objects.filter((o) => o.kind === "RoleBinding").map((o) => namespaceOf(o)));
  const namespaces = desired
    .filter((d) => d.object.kind === "Namespace" && d.error === undefined && bound.has(nameOf(d.object)))
    .map((d) => d.object);
  // Namespaces the rendered tree holds no Namespace for are made as the sync makes them: bare.
  const explicit = new Set(namespaces.map(nameOf));
  const implicit = [...bound].filter((n): n is string => n !== undefined && !explicit.has(n));
  for (const name of implicit) {
    const address = { apiVersion: "v1", kind: "Namespace", namespace: undefined, name };
    const missing = !(await client.get(address).catch(() => ({})));
    if (missing) namespaces.push(implicitNamespace(name));
  }
  for (const object of [own, ...namespaces, ...objects])
    await client.apply(object, true).catch((error: unknown) => {
      logger.warn(
        { cluster: client.cluster, kind: object.kind, name: nameOf(object), namespace: namespaceOf(object) },
        `team access not applied: ${message(error)}`,
      );
    });
}

function nameOf(object: JsonMap): string {
  return String(asMap(object.metadata).name ?? "");
}

function namespaceOf(object: JsonMap): string | undefined {
  const namespace = asMap(object.metadata).namespace;
  return typeof namespace === "string" ? namespace : undefined;
}

function implicitNamespace(name: string): JsonMap {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, annotations: { [IMPLICIT_NAMESPACE_ANNOTATION]: "true" } },
  };
}

const ACCESS_KINDS: readonly (readonly [string, string])[] = [
  ["v1", "ServiceAccount"],
  ["rbac.authorization.k8s.io/v1", "RoleBinding"],
  ["rbac.authorization.k8s.io/v1", "ClusterRole"],
  ["rbac.authorization.k8s.io/v1", "ClusterRoleBinding"],
];

function accessKey(object: JsonMap): string {
  return `${String(object.kind)}/${namespaceOf(object) ?? ""}/${nameOf(object)}`;
}

const TEAM_ACCESS_SELECTOR = `${TEAM_LABEL},${MANAGED_BY.key}=${MANAGED_BY.value}`;

// Whether gitfleet made a team's account in this member (and so, maybe, more of its access).
async function anyTeamAccount(client: MemberClient): Promise<boolean> {
  const accounts = await client.list("v1", "ServiceAccount", TEAM_ACCESS_SELECTOR).catch(() => undefined);
  return (accounts ?? []).length > 0;
}

// Deletes the teams' access objects gitfleet made in this member that the teams no longer need.
async function removeStaleAccess(
  client: MemberClient,
  keep: ReadonlySet<string>,
  logger: Logger,
): Promise<void> {
  for (const [apiVersion, kind] of ACCESS_KINDS) {
    const live = await client.list(apiVersion, kind, TEAM_ACCESS_SELECTOR).catch(() => undefined);
    for (const object of live ?? []) {
      if (keep.has(accessKey(object))) continue;
      await client
        .delete(addressOf(object), String(asMap(object.metadata).uid ?? ""))
        .catch((error: unknown) => {
          logger.warn(
            { cluster: client.cluster, kind, name: nameOf(object), namespace: namespaceOf(object) },
            `stale team access not removed: ${message(error)}`,
          );
        });
    }
  }
}

/** The client a desired object is written with: as its team when it has one (the member's RBAC decides). */
export function writerOf(client: MemberClient, desired: DesiredObject): MemberClient {
  return desired.team ? client.as(teamUser(desired.team)) : client;
}
