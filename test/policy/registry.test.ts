import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { UpgradeStatus } from "../../src/migrate/control-plane-upgrade.js";
import { RESTORE_PHASES, type RestoreStatus } from "../../src/migrate/etcd-restore.js";
import { BATCH_STATES, type MigrationStatus } from "../../src/migrate/migration-state.js";
import type { HealthStatus } from "../../src/model/health.js";
import { EVENT_KINDS } from "../../src/model/trailers.js";
import { migrationsPolicy } from "../../src/policy/migrations.js";
import type { PolicySpec } from "../../src/policy/policy.js";
import { POLICIES, POLICY_WRITERS } from "../../src/policy/registry.js";
import { restoresPolicy } from "../../src/policy/restores.js";
import { upgradesPolicy } from "../../src/policy/upgrades.js";
import { STATUS_FILES, type StatusWriter, writerOf } from "../../src/status/layout.js";

// The registry is the one list of features that remember: every status writer beside the core ones
// is exactly one policy, every kind a policy's steps are is a kind the trailer knows, and every
// policy reads back what it writes.

// Writers that are the round itself, not policies: the render, the sync's inventories, the agents'
// and the shards' reports. The autoscalers' files are written by the autoscaling edge, which samples
// members in the middle of the round; it is the one writer not behind the seam yet.
const CORE: readonly StatusWriter[] = ["reconcile", "sync", "agent", "shard"];
const NOT_YET: readonly StatusWriter[] = ["autoscaling"];

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
    const policies = writers.filter((writer) => !CORE.includes(writer) && !NOT_YET.includes(writer));
    expect([...POLICY_WRITERS].sort()).toEqual(policies.sort());
    expect(new Set(POLICY_WRITERS).size).toBe(POLICIES.length);
  });

  it("has a case below for every policy it holds", () => {
    expect(CASES.map(([writer]) => writer)).toEqual([...POLICY_WRITERS]);
  });

  it.each(POLICIES.map((policy) => [policy.writer, policy.kind] as const))(
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
});
