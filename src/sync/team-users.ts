import { identityOf } from "../model/identity.js";
import { teamOfFile } from "../model/team-files.js";
import type { FleetModel } from "../model/types.js";
import { INVENTORY_NAMESPACE } from "./inventory.js";

// Who a team's objects are applied as in each member (team-access.ts makes that account's RBAC).

/** The namespace of the teams' ServiceAccounts in each member. */
export const TEAM_ACCOUNT_NAMESPACE = INVENTORY_NAMESPACE;
/** The label that names the team an access object is for. */
export const TEAM_LABEL = "gitfleet.io/team";

/** The ServiceAccount (and role and binding names) of a team in each member. */
export function teamAccountName(team: string): string {
  return `gitfleet-team-${team}`;
}

/** The user a team's objects are applied as (the Impersonate-User of each write). */
export function teamUser(team: string): string {
  return `system:serviceaccount:${TEAM_ACCOUNT_NAMESPACE}:${teamAccountName(team)}`;
}

/** Each object the fleet's teams own, by identity, and its team's name (objects of platform files are absent). */
export function teamOwners(model: FleetModel): ReadonlyMap<string, string> {
  const owners = new Map<string, string>();
  if (model.teams.length === 0) return owners;
  const teamOf = teamOfFile(model.teams);
  for (const resource of model.apps.flatMap((app) => app.resources)) {
    const team = teamOf(resource.origin.file);
    if (team) owners.set(identityOf(resource.group, resource.kind, resource.namespace, resource.name), team);
  }
  return owners;
}
