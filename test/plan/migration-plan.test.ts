import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import type { MigrationStatus } from "../../src/migrate/migration-state.js";
import type { FleetModel, Migration, MigrationBatch } from "../../src/model/types.js";
import { migrationLines } from "../../src/plan/format-migration-plan.js";
import { compareWithLive, migrationChanges, startingObjects } from "../../src/plan/migration-plan.js";
import type { RenderedObject } from "../../src/render/render-result.js";

// What a pull request does to migrations, before it is merged: which batches start or wait, which
// apps detach, and what adopting changes in what runs.

const migration = (batches: MigrationBatch[]): Migration =>
  ({ metadata: { name: "shop" }, spec: { batches } }) as unknown as Migration;
const model = (batches: MigrationBatch[]): FleetModel =>
  ({ migrations: [migration(batches)] }) as unknown as FleetModel;
const batch = (name: string, cluster: string, extra: Partial<MigrationBatch> = {}): MigrationBatch => ({
  name,
  apps: ["checkout", "catalog"],
  clusters: [cluster],
  ...extra,
});
const rendered = (app: string, cluster: string, object: JsonMap): RenderedObject => ({
  app,
  cluster,
  path: `rendered/${cluster}/shop/${String(object.kind)}.${app}.yaml`,
  identity: `${String(object.kind)}/shop/${app}`,
  object,
  text: "",
});
const deployment = (app: string, image: string, extra: JsonMap = {}): JsonMap => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: app, namespace: "shop", labels: { "gitfleet.io/app": app } },
  spec: { replicas: 2, template: { spec: { containers: [{ name: app, image }] } }, ...extra },
});
const OBJECTS = ["east", "west", "north"].flatMap((c) => [
  rendered("checkout", c, deployment("checkout", "checkout:1")),
  rendered("catalog", c, deployment("catalog", "catalog:1")),
]);
const status = (states: Record<string, MigrationStatus["batches"][number]["state"]>): MigrationStatus => ({
  migration: "shop",
  detached: [],
  batches: Object.entries(states).map(([name, state]) => ({
    name,
    state,
    since: "2026-11-29T00:00:00Z",
    apps: { checkout: { [{ test: "east", staging: "west", prod: "north" }[name] ?? ""]: "Healthy" } },
  })),
});

describe("the migration part of a plan", () => {
  const cases: [string, MigrationBatch[], MigrationBatch[], MigrationStatus | undefined, string[]][] = [
    [
      "approving the next batch after a Succeeded one: it starts",
      [batch("test", "east", { approved: true }), batch("staging", "west")],
      [batch("test", "east", { approved: true }), batch("staging", "west", { approved: true })],
      status({ test: "Succeeded", staging: "WaitingApproval" }),
      ["shop/staging starts: every batch before it has Succeeded: checkout/west catalog/west"],
    ],
    [
      "approving a batch while the one before observes: it waits",
      [batch("test", "east", { approved: true }), batch("staging", "west")],
      [batch("test", "east", { approved: true }), batch("staging", "west", { approved: true })],
      status({ test: "Observing", staging: "Pending" }),
      ["shop/staging waits: waits for batch test (Observing): checkout/west catalog/west"],
    ],
    [
      "without a status branch, an earlier batch is not known to have Succeeded",
      [batch("test", "east")],
      [batch("test", "east", { approved: true }), batch("staging", "west", { approved: true })],
      undefined,
      [
        "shop/test starts: every batch before it has Succeeded: checkout/east catalog/east",
        "shop/staging waits: waits for batch test (not started): checkout/west catalog/west",
      ],
    ],
    [
      "rollback: true on a started batch detaches it",
      [batch("test", "east", { approved: true })],
      [batch("test", "east", { approved: true, rollback: true })],
      status({ test: "Observing" }),
      ["shop/test detaches: rollback: true: checkout/east catalog/east"],
    ],
    [
      "an app taken out of a started batch detaches",
      [batch("test", "east", { approved: true })],
      [batch("test", "east", { approved: true, apps: ["catalog"] })],
      status({ test: "Succeeded" }),
      ["shop/ detaches: removed from the migration: checkout/east"],
    ],
    [
      "editing nothing about approvals changes nothing",
      [batch("test", "east", { approved: true })],
      [batch("test", "east", { approved: true, observe: "5m" })],
      status({ test: "Observing" }),
      [],
    ],
  ];
  it.each(cases)("%s", (_name, base, head, recorded, expected) => {
    const changes = migrationChanges({
      base: model(base),
      head: model(head),
      objects: OBJECTS,
      status: () => recorded,
    });
    expect(
      changes.map(
        (c) =>
          `${c.migration}/${c.batch} ${c.action}: ${c.reason}: ${c.pairs.map((p) => `${p.app}/${p.cluster}`).join(" ")}`,
      ),
    ).toEqual(expected);
  });

  it("compares each object of a starting batch with what runs: adopt as is, adopt changing fields, create", () => {
    const objects = [
      ...OBJECTS,
      rendered("catalog", "east", {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "catalog", namespace: "shop" },
        data: { a: "1" },
      }),
    ];
    const changes = migrationChanges({
      base: model([batch("test", "east")]),
      head: model([batch("test", "east", { approved: true })]),
      objects,
      status: () => undefined,
    });
    const starting = startingObjects(changes, objects);
    expect(starting.map((o) => `${o.app}/${o.cluster}/${String(o.object.kind)}`)).toEqual([
      "catalog/east/ConfigMap",
      "catalog/east/Deployment",
      "checkout/east/Deployment",
    ]);
    const live: Record<string, JsonMap> = {
      // catalog runs with another image and 3 replicas; checkout runs exactly as rendered.
      "catalog/Deployment": deployment("catalog", "catalog:0.9", { replicas: 3 }),
      "checkout/Deployment": {
        ...deployment("checkout", "checkout:1"),
        metadata: { name: "checkout", namespace: "shop" },
      },
    };
    const adoptions = compareWithLive(starting, (o) => live[`${o.app}/${String(o.object.kind)}`]);
    expect(adoptions.map((a) => [a.object, a.verdict, a.fields.map((f) => f.path), a.restartsPods])).toEqual([
      ["ConfigMap shop/catalog", "create", [], false],
      ["Deployment shop/catalog", "adopt", ["spec.replicas", "spec.template.spec.containers[0].image"], true],
      // gitfleet's own label is not a change people need to review.
      ["Deployment shop/checkout", "adopt", [], false],
    ]);
    const lines = migrationLines({ batches: changes, adoptions, comparedWithLive: true });
    expect(lines).toEqual([
      "shop/test starts when merged (every batch before it has Succeeded): its apps are adopted",
      "  checkout in east:",
      "    = Deployment shop/checkout: adopted as it runs, no field changes",
      "  catalog in east:",
      "    + ConfigMap shop/catalog: not running here, created",
      "    ~ Deployment shop/catalog: adopted, changing 2 fields (the pod template changes: its pods restart)",
      "        spec.replicas: 3 → 2",
      '        spec.template.spec.containers[0].image: "catalog:0.9" → "catalog:1"',
      "  nothing is deleted: adopting never deletes",
    ]);
  });

  it("compares the objects of an approved batch that waits too: its pull request is where they are reviewed", () => {
    const changes = migrationChanges({
      base: model([batch("test", "east", { approved: true }), batch("staging", "west")]),
      head: model([batch("test", "east", { approved: true }), batch("staging", "west", { approved: true })]),
      objects: OBJECTS,
      status: () => status({ test: "Observing", staging: "Pending" }),
    });
    expect(changes.map((c) => c.action)).toEqual(["waits"]);
    const starting = startingObjects(changes, OBJECTS);
    expect(starting.map((o) => `${o.app}/${o.cluster}`)).toEqual(["catalog/west", "checkout/west"]);
    const lines = migrationLines({
      batches: changes,
      adoptions: compareWithLive(starting, () => undefined),
      comparedWithLive: true,
    });
    expect(lines[0]).toBe(
      "shop/staging approved; it waits for batch test (Observing), then starts: its apps are adopted",
    );
    expect(lines).toContain("    + Deployment shop/checkout: not running here, created");
  });

  it("never shows a Secret's values", () => {
    const secret = (value: string): JsonMap => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "db", namespace: "shop" },
      data: { password: value },
      type: "Opaque",
    });
    const [adoption] = compareWithLive([rendered("checkout", "east", secret("bmV3"))], () => secret("b2xk"));
    expect(adoption?.fields).toEqual([]);
    expect(JSON.stringify(adoption)).not.toMatch(/bmV3|b2xk/);
  });
});
