import { pathMatcher } from "./path-patterns.js";
import type { Team } from "./team-types.js";

/**
 * Which team owns a fleet repo file: the first Team whose paths match it (undefined: the platform
 * team's). Each file is matched once. Validation reports a file two teams match; everything else
 * that asks whose a file is — the sync's impersonation, the API's scope — asks this.
 */
export function teamOfFile(teams: readonly Team[]): (file: string) => string | undefined {
  const matchers = teams.map((team) => ({
    name: team.metadata.name,
    matchers: team.spec.paths.map(pathMatcher),
  }));
  const known = new Map<string, string | undefined>();
  return (file) => {
    if (!known.has(file))
      known.set(file, matchers.find((t) => t.matchers.some((match) => match(file)))?.name);
    return known.get(file);
  };
}
