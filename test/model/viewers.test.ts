import { beforeAll, describe, expect, it } from "vitest";
import type { FleetModel } from "../../src/model/types.js";
import { accessOf, appTeams, maySeeApp, namesFromClaims } from "../../src/model/viewers.js";
import { loadWithCharts, readExampleRepo } from "../helpers/example-repo.js";

/** Who sees what of the example fleet: its platform owners, its two teams, and anyone else. */
let model: FleetModel;
beforeAll(async () => {
  const loaded = await loadWithCharts(await readExampleRepo());
  if (!loaded.model) throw new Error("the example fleet does not load");
  model = loaded.model;
});

describe("the names an identity provider's claims give", () => {
  it.each([
    [{ preferred_username: "alice" }, ["@alice"]],
    [
      { preferred_username: "alice", email: "alice@example.com", email_verified: true },
      ["@alice", "alice@example.com"],
    ],
    [{ email: "alice@example.com", email_verified: false }, []],
    [
      { preferred_username: "bob", groups: ["example-shop", "example-shop:games"] },
      ["@bob", "@example-shop", "@example-shop/games"],
    ],
    [{ preferred_username: "x".repeat(201), groups: [7, null, "ok"] }, ["@ok"]],
    [{ preferred_username: "eve\nadmin", groups: "example-shop:platform" }, []],
  ])("%j → %j", (claims, names) => {
    expect(namesFromClaims(claims)).toEqual(names);
  });
});

describe("a viewer's access", () => {
  const viewer = (...names: string[]) => ({ subject: "test", names });
  it.each([
    [["@example-shop/platform"], { admin: true, teams: [] }],
    [["@Example-Shop/Platform"], { admin: true, teams: [] }],
    [["@example-shop/games"], { admin: false, teams: ["games"] }],
    [["@example-shop/sre-oncall", "@example-shop/commerce"], { admin: false, teams: ["commerce", "games"] }],
    [["@example-shop"], { admin: false, teams: [] }],
    [[], { admin: false, teams: [] }],
  ])("%j → %j", (names, access) => {
    expect(accessOf(model, viewer(...names))).toEqual(access);
  });

  it("lets everyone see everything in a fleet that names no owners at all", () => {
    expect(accessOf({ fleet: undefined, teams: [] }, viewer())).toEqual({ admin: true, teams: [] });
  });

  it("shows a team its own apps, the platform team all, and nobody else any", () => {
    const owners = appTeams(model);
    expect(Object.fromEntries(owners)).toEqual({
      arena: "games",
      "orders-worker": "commerce",
      "storefront-api": "commerce",
    });
    const visible = (...names: string[]) =>
      model.apps
        .filter((a) => maySeeApp(accessOf(model, viewer(...names)), owners, a.name))
        .map((a) => a.name);
    expect(visible("@example-shop/games")).toEqual(["arena"]);
    expect(visible("@example-shop/commerce")).toEqual(["orders-worker", "storefront-api"]);
    expect(visible("@example-shop/platform")).toEqual(model.apps.map((a) => a.name));
    expect(visible("@someone")).toEqual([]);
  });
});
