import { teamOfFile } from "./team-files.js";
import type { FleetModel } from "./types.js";

/**
 * Who is asking the dashboard or the API, as gitfleet compares them with the owners Teams and
 * fleet.yaml name: CODEOWNERS-style names (`@user`, `@org/team`, an e-mail address). An identity
 * provider's claims become such names by namesFromClaims; an automation token carries its own.
 */
export interface Viewer {
  /** The identity provider's subject, or the token's name: for logs and the dashboard's header. */
  readonly subject: string;
  readonly names: readonly string[];
}

/** What a viewer may see and plan: everything (a platform owner), or the apps of some teams. */
export interface ViewerAccess {
  readonly admin: boolean;
  /** The teams whose owners name the viewer, sorted. */
  readonly teams: readonly string[];
}

/**
 * The names a person's OpenID Connect claims give: `@<preferred_username>`, the e-mail address when
 * the provider verified it, and `@<group>` for each group, a provider's `org:team` written as
 * CODEOWNERS writes it (`@org/team`). Only strings of sane length count; anything else is ignored.
 */
export function namesFromClaims(claims: Readonly<Record<string, unknown>>): string[] {
  const names: string[] = [];
  const username = claims.preferred_username;
  if (typeof username === "string" && SANE.test(username)) names.push(`@${username}`);
  if (typeof claims.email === "string" && claims.email_verified === true && SANE.test(claims.email))
    names.push(claims.email);
  const groups = Array.isArray(claims.groups) ? claims.groups.slice(0, MAX_GROUPS) : [];
  for (const group of groups)
    if (typeof group === "string" && SANE.test(group)) names.push(`@${group.replace(":", "/")}`);
  return names;
}

const SANE = /^[A-Za-z0-9._@+/:-]{1,200}$/;
const MAX_GROUPS = 500;

/**
 * A viewer's access in a fleet: admin when fleet.yaml's platformOwners name them (or, in a fleet
 * without platform owners and without teams, nobody is anybody's: every viewer is admin, as before
 * teams existed); otherwise the teams whose owners name them. Names compare without case, as forges
 * compare them.
 */
export function accessOf(model: Pick<FleetModel, "fleet" | "teams">, viewer: Viewer): ViewerAccess {
  const names = new Set(viewer.names.map((n) => n.toLowerCase()));
  const named = (owners: readonly string[] | undefined) =>
    (owners ?? []).some((o) => names.has(o.toLowerCase()));
  const platform = model.fleet?.spec.platformOwners;
  const unowned = (platform ?? []).length === 0 && model.teams.length === 0;
  const teams = model.teams
    .filter((team) => named(team.spec.owners))
    .map((team) => team.metadata.name)
    .sort();
  return { admin: unowned || named(platform), teams };
}

/**
 * Each app's team: the team whose paths match the app's definition file (its app.yaml, else its
 * first manifest). Apps no team owns are the platform team's and absent here.
 */
export function appTeams(model: Pick<FleetModel, "apps" | "teams">): ReadonlyMap<string, string> {
  const owned = new Map<string, string>();
  if (model.teams.length === 0) return owned;
  const teamOf = teamOfFile(model.teams);
  for (const app of model.apps) {
    const file = app.definition?.origin.file ?? app.resources[0]?.origin.file;
    const team = file ? teamOf(file) : undefined;
    if (team) owned.set(app.name, team);
  }
  return owned;
}

/** Whether a viewer may see an app: an admin any, a team member its teams' apps. */
export function maySeeApp(access: ViewerAccess, owners: ReadonlyMap<string, string>, app: string): boolean {
  if (access.admin) return true;
  const team = owners.get(app);
  return team !== undefined && access.teams.includes(team);
}
