import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CronStatus, HpaStatus } from "../../src/autoscale/autoscaling-round.js";
import type { ScaleDownStatus } from "../../src/autoscale/scale-down.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { BATCH_STATES, type MigrationStatus } from "../../src/migrate/migration-state.js";
import type { HealthStatus } from "../../src/model/health.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { autoscalingFiles, readAutoscalingStatus } from "../../src/status/autoscaling-files.js";
import { migrationStatusText, readMigrationStatus } from "../../src/status/migration-file.js";
import { minimalFleetWith, webFederatedHpa } from "../helpers/minimal-fleet.js";

/** The migrations' and the autoscalers' status files read back as written: decode(encode(x)) = x. */
const name = fc.stringMatching(/^[a-z]([a-z0-9-]{0,8}[a-z0-9])?$/);
const time = fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2030, 0, 1) });
const iso = time.map((ms) => new Date(ms).toISOString());
const health = fc.constantFrom<HealthStatus>("Healthy", "Progressing", "Degraded", "Missing", "Unknown");
const state = fc.constantFrom(...BATCH_STATES);

const migration: fc.Arbitrary<MigrationStatus> = fc.record({
  migration: name,
  batches: fc.array(
    fc
      .record({
        name,
        state,
        since: iso,
        approvedIn: fc.option(fc.stringMatching(/^[0-9a-f]{40}$/), { nil: undefined }),
        observingSince: fc.option(iso, { nil: undefined }),
        reason: fc.option(fc.string({ maxLength: 30 }), { nil: undefined }),
        apps: fc.dictionary(name, fc.dictionary(name, health, { maxKeys: 3 }), { maxKeys: 3 }),
      })
      .map((batch) => JSON.parse(JSON.stringify(batch))),
    { maxLength: 4 },
  ),
  detached: fc.array(
    fc.tuple(name, name).map(([app, cluster]) => `${app}/${cluster}`),
    { maxLength: 4 },
  ),
});

// A fleet with a FederatedHPA for web (a ceiling of 50 replicas) and a ScaleDownRequest of a CloneSet.
const loaded = loadFleet(
  minimalFleetWith({
    "autoscaling/web.yaml": webFederatedHpa({ min: 1, max: 50, cpu: 70 }),
    "autoscaling/nightly.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: CronScale
metadata:
  name: nightly
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: gitfleet.io/v1alpha1, kind: FederatedHPA, name: web}
  rules:
    - {name: night, schedule: "0 22 * * *", targetMinReplicas: 2}
`,
    "interpreters/cloneset.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: ResourceInterpreter
metadata:
  name: kruise-cloneset
spec:
  target: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet}
  replicasPath: spec.replicas
  podTemplatePath: spec.template
  podsToDeletePath: spec.scaleStrategy.podsToDelete
`,
    "apps/web/cloneset.yaml": `apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: game
spec:
  replicas: 4
  selector: {matchLabels: {app: game}}
  template:
    metadata: {labels: {app: game}}
    spec:
      containers: [{name: game, image: registry.example.com/game:1}]
`,
    "autoscaling/drain.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: ScaleDownRequest
metadata:
  name: drain
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: game}
  cluster: east
  pods: [game-1]
`,
  }),
);
if (!loaded.model) throw new Error(JSON.stringify(loaded.problems));
const model = loaded.model;
const count = fc.integer({ min: 0, max: 50 });

const hpa: fc.Arbitrary<HpaStatus> = fc
  .record({
    replicas: count,
    changedAt: fc.option(time, { nil: undefined }),
    reason: fc.option(fc.string({ maxLength: 30 }), { nil: undefined }),
    lastEvent: fc.option(fc.record({ at: time, change: fc.integer({ min: -50, max: 50 }) }), {
      nil: undefined,
    }),
    bounds: fc.option(
      fc.record({ by: fc.constant("cronscale/nightly"), minReplicas: count, maxReplicas: count }),
      { nil: undefined },
    ),
    distribution: fc.option(fc.record({ east: count, west: count }), { nil: undefined }),
    recordedAt: fc.option(time, { nil: undefined }),
  })
  .map((fields) => JSON.parse(JSON.stringify(fields)));

const scaleDown: fc.Arbitrary<ScaleDownStatus> = fc
  .record({
    state: fc.constantFrom("Done" as const, "Refused" as const),
    cluster: fc.constantFrom("east", "west"),
    pods: fc.array(name, { maxLength: 3 }),
    at: time,
    reason: fc.option(fc.string({ maxLength: 30 }), { nil: undefined }),
    from: fc.option(count, { nil: undefined }),
    total: fc.option(count, { nil: undefined }),
    clusters: fc.option(fc.record({ east: count, west: count }), { nil: undefined }),
    sourceReplicas: fc.option(count, { nil: undefined }),
  })
  .map((fields) => JSON.parse(JSON.stringify(fields)));

const outcome = fc.constantFrom("applied" as const, "superseded" as const);
const cron: fc.Arbitrary<CronStatus> = fc
  .record({
    history: fc.record({
      since: time,
      rules: fc.array(
        fc.record({
          rule: fc.constantFrom("night", "day"),
          firedAt: time,
          outcome,
          by: fc.option(fc.constant("day"), { nil: undefined }),
        }),
        { maxLength: 3 },
      ),
    }),
    runs: fc.array(
      fc.record({
        rule: fc.constantFrom("night"),
        firedAt: time,
        ranAt: time,
        outcome,
        result: fc.string({ maxLength: 20 }),
      }),
      { maxLength: 3 },
    ),
    replicas: fc.option(count, { nil: undefined }),
    reason: fc.option(fc.string({ maxLength: 30 }), { nil: undefined }),
    nextAt: fc.option(time, { nil: undefined }),
  })
  .map((fields) => JSON.parse(JSON.stringify(fields)));

// The status files as the branch holds them: path → text.
function files(
  hpaState: HpaStatus,
  scaleDownState: ScaleDownStatus,
  cronState: CronStatus,
): Map<string, string> {
  const written = autoscalingFiles(
    model,
    {
      hpas: new Map([["shop/web", hpaState]]),
      crons: new Map([["shop/nightly", cronState]]),
      scaleDowns: new Map([["shop/drain", scaleDownState]]),
    },
    [],
  );
  return new Map([...written].flatMap(([path, text]) => (text === null ? [] : [[path, text]])));
}

describe("status file codecs round-trip", () => {
  it("status/migrations/<name>.yaml", () => {
    fc.assert(
      fc.property(migration, (status) => {
        expect(readMigrationStatus(readEmittedYaml(migrationStatusText(status)))).toEqual(status);
      }),
    );
  });

  it("status/autoscaling/: a FederatedHPA's total, bounds, distribution and last event; a CronScale's rules and runs; a scale-down's outcome", () => {
    fc.assert(
      fc.property(hpa, scaleDown, cron, time, (hpaState, scaleDownState, cronState, now) => {
        const read = readAutoscalingStatus(model, files(hpaState, scaleDownState, cronState), now);
        expect(read.crons.get("shop/nightly")).toEqual(cronState);
        // The algorithm's history is not kept: a restarted autoscaler starts it from its total, now.
        const { history, ...kept } = read.hpas.get("shop/web") ?? ({} as HpaStatus);
        expect(kept).toEqual(hpaState);
        expect(history.recommendations).toEqual([{ at: now, replicas: hpaState.replicas }]);
        expect(read.scaleDowns.get("shop/drain")).toEqual(scaleDownState);
      }),
    );
  });
});
