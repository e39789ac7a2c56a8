import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import {
  type FetchedSource,
  mountTeamSources,
  sourceKey,
  teamSourcePins,
} from "../../src/load/team-sources.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { formatProblem } from "../../src/model/problem.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { MINIMAL_FLEET, minimalFleetWith } from "../helpers/minimal-fleet.js";

// A Team that pins its own repository: which pins a tree holds, how the fetched files are laid over
// the fleet repo, and what loading says — at the Team's spec.source — when they do not fit. The
// files it brings are the team's files: its bounds apply to them as to any other.

const COMMIT = "0123456789abcdef0123456789abcdef01234567";
const URL = "https://git.example.com/games/deploy.git";
const team = (source = `  source:\n    url: ${URL}\n    commit: ${COMMIT}\n`) =>
  `apiVersion: gitfleet.io/v1alpha1
kind: Team
metadata:
  name: games
spec:
  paths: [apps/arena/**]
  owners: ["@example/games"]
  namespaces: [games]
${source}`;

const ARENA = {
  "apps/arena/app.yaml":
    "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: arena\nspec:\n  namespace: games\n",
  "apps/arena/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: arena\ndata: {a: b}\n",
};
const PLACEMENT = {
  "placements/arena.yaml":
    "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: arena\nspec:\n  apps: [arena]\n",
};

/** Loads the minimal fleet with the games Team and `fetched` answering its pin. */
function load(files: Record<string, string | null>, fetched?: FetchedSource) {
  const tree = minimalFleetWith({ "teams/games.yaml": team(), ...PLACEMENT, ...files });
  const pins = teamSourcePins(tree);
  const answers = new Map(fetched ? pins.map((pin) => [sourceKey(pin.source), fetched] as const) : []);
  const mounts = mountTeamSources(tree, pins, answers);
  return loadFleet(tree, undefined, undefined, undefined, undefined, mounts);
}

const files = (record: Record<string, string>): FetchedSource => ({ files: fileTreeFromText(record) });

describe("a team's own repository", () => {
  it("lays its files over the fleet repo: the team's app is loaded and rendered from them", () => {
    const result = load({}, files(ARENA));
    expect(result.problems.map(formatProblem)).toEqual([]);
    const rendered = renderFleet(result.model as NonNullable<typeof result.model>, {});
    expect(rendered.objects.filter((o) => o.app === "arena").map((o) => `${o.cluster} ${o.path}`)).toEqual([
      "east rendered/east/games/core.ConfigMap.arena.yaml",
      "west rendered/west/games/core.ConfigMap.arena.yaml",
    ]);
  });

  it.each([
    [
      "not fetched (no --team-source)",
      {},
      undefined,
      `teams/games.yaml:10:10: error: /spec/source/url: the team's repository ${URL} was not fetched: gitfleet fetches it from a URL the operator allows (--team-source) [TEAM_SOURCE]`,
    ],
    [
      "a fetch that failed",
      {},
      { error: `${URL} is not among the team sources the operator allows (--team-source)` },
      `teams/games.yaml:10:10: error: /spec/source/url: ${URL} is not among the team sources the operator allows (--team-source) [TEAM_SOURCE]`,
    ],
    [
      "a file outside the team's paths",
      {},
      files({ ...ARENA, "placements/arena.yaml": "x: 1\n" }),
      `teams/games.yaml:10:5: error: /spec/source: placements/arena.yaml in ${URL} is outside the team's paths (apps/arena/**) [TEAM_SOURCE]`,
    ],
    [
      "a file the fleet repo holds",
      { "apps/arena/app.yaml": ARENA["apps/arena/app.yaml"] },
      files(ARENA),
      `teams/games.yaml:10:5: error: /spec/source: apps/arena/app.yaml in ${URL} is a file the fleet repo already holds [TEAM_SOURCE]`,
    ],
  ] as const)("is an error at the Team when %s", (_, extra, fetched, expected) => {
    const result = load(extra, fetched);
    expect(result.model).toBeUndefined();
    expect(result.problems.map(formatProblem)).toContain(expected);
  });

  it("keeps its files within the team's bounds, reported at the file it brought", () => {
    const result = load(
      {},
      files({
        ...ARENA,
        "apps/arena/config.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: arena\n  namespace: payments\ndata: {a: b}\n",
      }),
    );
    expect(result.problems.map(formatProblem)).toEqual([
      "apps/arena/config.yaml:5:14: error: /metadata/namespace: namespace payments is outside team games's namespaces (games; teams/games.yaml) [OUTSIDE_TEAM_BOUNDS]",
    ]);
  });

  it("brings nothing from a path with . or .. segments", () => {
    const tree = minimalFleetWith({
      "teams/games.yaml": team(`  source:\n    url: ${URL}\n    commit: ${COMMIT}\n    path: deploy/../..\n`),
    });
    const pins = teamSourcePins(tree);
    const mounts = mountTeamSources(
      tree,
      pins,
      new Map(pins.map((p) => [sourceKey(p.source), files(ARENA)])),
    );
    expect(mounts.files.size).toBe(0);
    expect(mounts.issues.map((i) => i.message)).toEqual([
      "the source's path deploy/../.. may not have . or .. segments",
    ]);
  });

  it.each([
    ["a Team with a source", team(), 1],
    ["a Team without one", team(""), 0],
    ["a source without a commit", team(`  source:\n    url: ${URL}\n`), 0],
    ["a source with a short commit", team(`  source:\n    url: ${URL}\n    commit: abc123\n`), 0],
    ["a source at an ssh URL", team(`  source:\n    url: ssh://git@x/y\n    commit: ${COMMIT}\n`), 0],
    ["a file that does not parse", "kind: Team\nspec: [\n", 0],
    ["a file of another kind", team().replace("kind: Team", "kind: Placement"), 0],
  ])("%s pins %d repositories", (_, text, count) => {
    expect(teamSourcePins(fileTreeFromText({ ...MINIMAL_FLEET, "teams/games.yaml": text }))).toHaveLength(
      count,
    );
  });
});
