import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { UpgradeStatus } from "../../src/migrate/control-plane-upgrade.js";
import { RESTORE_PHASES, type RestoreStatus } from "../../src/migrate/etcd-restore.js";
import { BATCH_STATES, type MigrationStatus } from "../../src/migrate/migration-state.js";
import type { HealthStatus } from "../../src/model/health.js";
import { noObservations } from "../../src/model/observed-state.js";
import { EVENT_KINDS } from "../../src/model/trailers.js";
import type { FleetModel } from "../../src/model/types.js";
import { autoscalingPolicy } from "../../src/policy/autoscaling.js";
import { migrationsPolicy } from "../../src/policy/migrations.js";
import type { PolicySpec } from "../../src/policy/policy.js";
import { NOTHING_SAMPLED, type RenderRoundInput } from "../../src/policy/policy.js";
import {
  advanceRenderPolicies,
  POLICIES,
  POLICY_WRITERS,
  RENDER_POLICIES,
  recordedRound,
  renderPoliciesCommit,
} from "../../src/policy/registry.js";
import { restoresPolicy } from "../../src/policy/restores.js";
import { upgradesPolicy } from "../../src/policy/upgrades.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { STATUS_FILES, type StatusWriter, writerOf } from "../../src/status/layout.js";
import { dividedWebFleet, webFederatedHpa } from "../helpers/minimal-fleet.js";

// The registry is the one list of features that remember: every status writer beside the core ones
// is exactly one policy, every kind a policy's steps are is a kind the trailer knows, and every
// policy reads back what it writes.

// Writers that are the round itself, not policies: the render, the sync's inventories, the agents'
// and the shards' reports.
const CORE: readonly StatusWriter[] = ["reconcile", "sync", "agent", "shard"];

const name = fc.stringMatching(/^[a-z]([a-z0-9-]{0,8}[a-z0-9])?$/);
const iso = fc
  .integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2030, 0, 1) })
  .map((ms) => new Date(ms).toISOString());
const commit = fc.stringMatching(/^[0-9a-f]{40}$/);
const health = fc.constantFrom<HealthStatus>("Healthy", "Progressing", "Degraded", "Missing", "Unknown");
const optional = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: undefined });
const batchHead = {
  name,
  state: fc.constantFrom(...BATCH_STATES),
  since: iso,
  approvedIn: optional(commit),
  observingSince: optional(iso),
  reason: optional(fc.string({ maxLength: 30 })),
};
// As written and read: JSON drops the fields left undefined.
const plain = <T>(value: unknown): T => JSON.parse(JSON.stringify(value)) as T;

const migration = (migrationName: string): fc.Arbitrary<MigrationStatus> =>
  fc
    .record({
      migration: fc.constant(migrationName),
      batches: fc.array(
        fc.record({ ...batchHead, apps: fc.dictionary(name, fc.dictionary(name, health, { maxKeys: 3 })) }),
        { maxLength: 4 },
      ),
      detached: fc.array(
        fc.tuple(name, name).map(([app, cluster]) => `${app}/${cluster}`),
        { maxLength: 3 },
      ),
    })
    .map((value) => plain<MigrationStatus>(value));

const upgrade = (upgradeName: string): fc.Arbitrary<UpgradeStatus> =>
  fc
    .record({
      upgrade: fc.constant(upgradeName),
      version: fc.constantFrom("v1.34.2", "v1.35.0"),
      batches: fc.array(fc.record({ ...batchHead, clusters: fc.dictionary(name, health, { maxKeys: 3 }) }), {
        maxLength: 4,
      }),
    })
    .map((value) => plain<UpgradeStatus>(value));

const restore = (restoreName: string): fc.Arbitrary<RestoreStatus> =>
  fc
    .record({
      restore: fc.constant(restoreName),
      cluster: name,
      snapshot: fc.stringMatching(/^etcd-[a-z0-9-]{1,20}\.db$/),
      phase: fc.constantFrom(...RESTORE_PHASES),
      since: iso,
      startedIn: commit,
      reason: optional(fc.string({ maxLength: 40 })),
    })
    .map((value) => plain<RestoreStatus>(value));

// Every policy of the registry with a generator of its statuses.
const CASES: readonly [string, PolicySpec<unknown, unknown>, (name: string) => fc.Arbitrary<unknown>][] = [
  ["migrations", migrationsPolicy.spec as PolicySpec<unknown, unknown>, migration],
  ["upgrades", upgradesPolicy.spec as PolicySpec<unknown, unknown>, upgrade],
  ["restores", restoresPolicy.spec as PolicySpec<unknown, unknown>, restore],
];

describe("the policy registry", () => {
  it("holds every status writer beside the round's own, once", () => {
    const writers = [...new Set(STATUS_FILES.map((file) => file.writer))];
    const policies = writers.filter((writer) => !CORE.includes(writer));
    expect([...POLICY_WRITERS].sort()).toEqual(policies.sort());
    expect(new Set(POLICY_WRITERS).size).toBe(POLICIES.length + RENDER_POLICIES.length);
  });

  it("has a case below for every policy it holds", () => {
    expect(CASES.map(([writer]) => writer)).toEqual(POLICIES.map((policy) => policy.writer));
    expect(RENDER_POLICIES.map((policy) => policy.writer)).toEqual(["autoscaling"]);
  });

  it.each([...POLICIES, ...RENDER_POLICIES].map((policy) => [policy.writer, policy.kind] as const))(
    "%s records its steps as a kind the trailer knows (%s)",
    (_, kind) => {
      expect(EVENT_KINDS).toContain(kind);
    },
  );

  it.each(CASES)("%s reads back what it writes, at the path its writer owns", (writer, spec, status) => {
    fc.assert(
      fc.property(
        name.chain((n) => fc.tuple(fc.constant(n), status(n))),
        ([statusName, value]) => {
          const [path, text] = spec.write(statusName, value);
          expect(writerOf(path)).toBe(writer);
          const read = spec.read(new Map([[path, text]]));
          expect([...read.keys()]).toEqual([statusName]);
          expect(read.get(statusName)).toEqual(value);
          // Byte-stable: written again, the same text.
          expect(spec.write(statusName, read.get(statusName))[1]).toBe(text);
        },
      ),
      { numRuns: 200 },
    );
  });

  it.each(CASES)(
    "%s skips what does not read as its status, and paths outside its directory",
    (_, spec, status) => {
      const [path] = spec.write("x", fc.sample(status("x"), 1)[0]);
      const read = spec.read(
        new Map([
          [path, "{not: [yaml"],
          ["status/clusters/x.yaml", "cluster: x\n"],
          ["rendered/x/ns/apps.Deployment.x.yaml", "kind: Deployment\n"],
        ]),
      );
      expect(read.size).toBe(0);
    },
  );

  describe("autoscaling, the policy that feeds its own round's render", () => {
    const T0 = Date.parse("2026-11-30T08:00:00Z");
    const fleetWith = dividedWebFleet;
    const scaled = fleetWith({
      "autoscaling/web.yaml": webFederatedHpa({ min: 2, max: 10 }),
      "autoscaling/peak.yaml":
        'apiVersion: gitfleet.io/v1alpha1\nkind: CronScale\nmetadata:\n  name: peak\n  namespace: shop\nspec:\n  scaleTargetRef: {apiVersion: gitfleet.io/v1alpha1, kind: FederatedHPA, name: web}\n  rules:\n    - {name: sale, schedule: "0 9 * * *", targetMinReplicas: 8, targetMaxReplicas: 20}\n',
    });
    const input = (model: FleetModel, files: ReadonlyMap<string, string>, now: number): RenderRoundInput => ({
      model,
      decisions: renderFleet(model, { observations: noObservations(now) }).decisions,
      files,
      workloads: new Map(),
      sampled: NOTHING_SAMPLED,
      now,
      intervalMs: 60_000,
    });
    const written = (files: ReadonlyMap<string, string | null>) =>
      new Map([...files].flatMap(([path, text]) => (text === null ? [] : [[path, text] as const])));

    it("writes only paths its writer owns, and a restart reads back what it wrote, byte for byte", () => {
      const first = advanceRenderPolicies(input(scaled, new Map(), T0), undefined);
      expect(first.files.size).toBeGreaterThan(0);
      for (const path of first.files.keys()) expect(writerOf(path)).toBe("autoscaling");
      expect(first.unrecorded).toEqual([{ kind: "scale", line: "cronscale peak: followed from now on" }]);
      // A restarted controller (no last round) starts from the branch: the same files, the same totals.
      const branch = written(first.files);
      const restarted = advanceRenderPolicies(input(scaled, branch, T0), undefined);
      expect(restarted.files).toEqual(first.files);
      expect(restarted.gives.scaling?.autoscaled).toEqual(first.gives.scaling?.autoscaled);
      expect(renderPoliciesCommit(restarted, branch).files.size).toBe(0);
      // Ten minutes on, what the branch recorded stands: the rule is not followed afresh.
      const later = advanceRenderPolicies(input(scaled, branch, T0 + 600_000), undefined);
      expect(later.unrecorded).toEqual([]);
    });

    it("carries its steps until a commit records them, and wakes for the next cron rule", () => {
      const first = advanceRenderPolicies(input(scaled, new Map(), T0), undefined);
      expect(first.wakeAt).toBe(Date.parse("2026-11-30T09:00:00Z"));
      const fired = advanceRenderPolicies(
        input(scaled, new Map(), Date.parse("2026-11-30T09:00:10Z")),
        first,
      );
      expect(fired.unrecorded.map((e) => e.line)[0]).toBe("cronscale peak: followed from now on");
      expect(fired.unrecorded.length).toBeGreaterThan(1);
      expect(fired.gives.scaling?.autoscaled.get("apps/Deployment/shop/web")?.replicas).toBe(8);
      const recorded = recordedRound(fired);
      expect(renderPoliciesCommit(recorded, new Map()).notes).toEqual([]);
    });

    it("removes its files once the fleet has no autoscaler, and has no round when none are left", () => {
      const first = advanceRenderPolicies(input(scaled, new Map(), T0), undefined);
      const branch = written(first.files);
      const none = fleetWith({});
      const gone = advanceRenderPolicies(input(none, branch, T0), first);
      expect([...gone.files.keys()].sort()).toEqual([...branch.keys()].sort());
      expect([...gone.files.values()].every((text) => text === null)).toBe(true);
      expect(autoscalingPolicy.advance(input(none, new Map(), T0), undefined)).toBeUndefined();
    });
  });
});
