import { asMap, type Json, type JsonMap } from "../apimachinery/json.js";
import {
  batchPairs,
  isStarted,
  type MigrationStatus,
  pairKey,
  placedClusters,
  statusPairs,
} from "../migrate/migration-state.js";
import { compareStrings } from "../model/file-tree.js";
import { describeManifest } from "../model/identity.js";
import type { FleetModel, Migration, MigrationBatch } from "../model/types.js";
import type { RenderedObject } from "../render/render-result.js";
import { SECRET_DIGEST_ANNOTATION, SECRET_KEYS_ANNOTATION } from "../render/secrets.js";
import { APP_LABEL, MANAGED_BY, PLACEMENT_ANNOTATION } from "../render/tracking.js";
import { driftedFields } from "../sync/drift.js";

// What a change does to migrations: the batches a pull request approves (and whether they start at
// merge or wait), the apps it detaches, and — for a batch that starts — what adopting each rendered
// object changes in what already runs. Pure: the live objects are read by the caller.

/** One app in one cluster of a batch. */
export interface MigrationPair {
  readonly app: string;
  readonly cluster: string;
}

/** A batch whose fate the change decides. */
export interface BatchChange {
  readonly migration: string;
  readonly batch: string;
  /** starts: adopted at merge; waits: approved, behind an earlier batch; detaches: rolled back or apps removed. */
  readonly action: "starts" | "waits" | "detaches";
  /** Why it waits, or what detaches it. */
  readonly reason: string;
  readonly pairs: readonly MigrationPair[];
}

/** What adopting one rendered object does to the live one. */
export interface ObjectAdoption {
  /** "Deployment shop/checkout". */
  readonly object: string;
  readonly app: string;
  readonly cluster: string;
  /** adopt: it runs and gitfleet takes it over; create: it does not run yet; unknown: not read. */
  readonly verdict: "adopt" | "create" | "unknown";
  /** The fields adoption changes (gitfleet's own labels aside); Secret values are never shown. */
  readonly fields: readonly FieldChange[];
  /** The pod template changes: adopting restarts the workload's pods. */
  readonly restartsPods: boolean;
}

export interface FieldChange {
  readonly path: string;
  readonly live?: Json;
  readonly rendered?: Json;
}

/** The migration part of a plan. */
export interface MigrationPlan {
  readonly batches: readonly BatchChange[];
  /** For the pairs of batches the change approves: each rendered object against what runs. */
  readonly adoptions: readonly ObjectAdoption[];
  /** Whether the live objects were read (a kubeconfig reached the clusters). */
  readonly comparedWithLive: boolean;
}

export interface MigrationPlanInput {
  readonly base: FleetModel | undefined;
  readonly head: FleetModel;
  /** The head's rendered objects. */
  readonly objects: readonly RenderedObject[];
  /** status/migrations/<name>.yaml from the status branch, if any. */
  readonly status: (migration: string) => MigrationStatus | undefined;
}

/** The batches a change approves, rolls back, or takes apps out of. */
export function migrationChanges(input: MigrationPlanInput): BatchChange[] {
  const clustersOf = placedClusters(input.objects);
  const pairsOf = (batch: MigrationBatch): MigrationPair[] => batchPairs(batch, clustersOf);
  return [...input.head.migrations]
    .sort((a, b) => compareStrings(a.metadata.name, b.metadata.name))
    .flatMap((migration) => {
      const name = migration.metadata.name;
      const before = input.base?.migrations.find((m) => m.metadata.name === name);
      const status = input.status(name);
      const changes = migration.spec.batches.flatMap((batch, index) =>
        batchChanges({ migration, index, before, status, pairs: pairsOf(batch) }),
      );
      const removed = removedPairs(migration, before, status, pairsOf);
      if (removed.length > 0)
        changes.push({
          migration: name,
          batch: "",
          action: "detaches",
          reason: "removed from the migration",
          pairs: removed,
        });
      return changes;
    });
}

interface BatchContext {
  readonly migration: Migration;
  readonly index: number;
  readonly before: Migration | undefined;
  readonly status: MigrationStatus | undefined;
  readonly pairs: readonly MigrationPair[];
}

// A batch newly approved (it starts or waits), or newly rolled back once started.
function batchChanges({ migration, index, before, status, pairs }: BatchContext): BatchChange[] {
  const batch = migration.spec.batches[index] as MigrationBatch;
  const name = migration.metadata.name;
  const was = before?.spec.batches.find((b) => b.name === batch.name);
  const state = status?.batches.find((b) => b.name === batch.name)?.state;
  const changes: BatchChange[] = [];
  if (batch.approved && !was?.approved && !isStarted(state)) {
    const blocker = blockerOf(migration, index, status);
    changes.push({
      migration: name,
      batch: batch.name,
      action: blocker ? "waits" : "starts",
      reason: blocker ?? "every batch before it has Succeeded",
      pairs,
    });
  }
  const started = isStarted(state) || (!status && was?.approved === true);
  if (batch.rollback && !was?.rollback && started)
    changes.push({ migration: name, batch: batch.name, action: "detaches", reason: "rollback: true", pairs });
  return changes;
}

// The first earlier batch that has not Succeeded, as the status branch records it.
function blockerOf(
  migration: Migration,
  index: number,
  status: MigrationStatus | undefined,
): string | undefined {
  for (const earlier of migration.spec.batches.slice(0, index)) {
    const state = status?.batches.find((b) => b.name === earlier.name)?.state;
    if (state !== "Succeeded") return `waits for batch ${earlier.name} (${state ?? "not started"})`;
  }
  return undefined;
}

// Pairs a started batch covered (per the status branch) that no batch of the head covers.
function removedPairs(
  migration: Migration,
  before: Migration | undefined,
  status: MigrationStatus | undefined,
  pairsOf: (batch: MigrationBatch) => MigrationPair[],
): MigrationPair[] {
  const covered = new Set(migration.spec.batches.flatMap(pairsOf).map(keyOf));
  const started: MigrationPair[] = status
    ? status.batches.filter((b) => isStarted(b.state)).flatMap(statusPairs)
    : (before?.spec.batches.filter((b) => b.approved) ?? []).flatMap(pairsOf);
  const seen = new Set<string>();
  return started.filter((p) => {
    const key = keyOf(p);
    if (covered.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const keyOf = (p: MigrationPair) => pairKey(p.app, p.cluster);

// gitfleet's own labels and annotations: every adopted object gets them, people need not review them.
const TRACKING_LABELS: readonly string[] = [MANAGED_BY.key, APP_LABEL];
const TRACKING_ANNOTATIONS: readonly string[] = [
  PLACEMENT_ANNOTATION,
  SECRET_DIGEST_ANNOTATION,
  SECRET_KEYS_ANNOTATION,
];

function withoutTracking(object: JsonMap): JsonMap {
  const metadata = { ...asMap(object.metadata) };
  for (const [field, keys] of [
    ["labels", TRACKING_LABELS],
    ["annotations", TRACKING_ANNOTATIONS],
  ] as const) {
    const rest = Object.fromEntries(
      Object.entries(asMap(metadata[field])).filter(([k]) => !keys.includes(k)),
    );
    if (Object.keys(rest).length > 0) metadata[field] = rest;
    else delete metadata[field];
  }
  return { ...object, metadata };
}

const POD_TEMPLATE_KINDS = new Set(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"]);

/**
 * Each rendered object of a starting pair against the live one (`live` gives it, or undefined when
 * it does not run there; `live` itself undefined when the clusters were not read).
 */
export function compareWithLive(
  objects: readonly RenderedObject[],
  live: ((object: RenderedObject) => JsonMap | undefined) | undefined,
): ObjectAdoption[] {
  return objects.map((o) => {
    const object = describeManifest(o.object);
    if (!live)
      return { object, app: o.app, cluster: o.cluster, verdict: "unknown", fields: [], restartsPods: false };
    const current = live(o);
    if (!current)
      return { object, app: o.app, cluster: o.cluster, verdict: "create", fields: [], restartsPods: false };
    const secret = o.object.kind === "Secret" && o.object.apiVersion === "v1";
    const fields = driftedFields(withoutTracking(o.object), current, 50)
      // Secret values never leave the cluster or reach Git (the render holds none): not compared.
      .filter((f) => !(secret && (f.path.startsWith("data") || f.path.startsWith("stringData"))))
      .sort((a, b) => compareStrings(a.path, b.path))
      .map((f) => ({
        path: f.path,
        ...(f.live === undefined ? {} : { live: f.live }),
        ...(f.rendered === undefined ? {} : { rendered: f.rendered }),
      }));
    const restartsPods =
      POD_TEMPLATE_KINDS.has(String(o.object.kind)) && fields.some((f) => f.path.startsWith("spec.template"));
    return { object, app: o.app, cluster: o.cluster, verdict: "adopt", fields, restartsPods };
  });
}

/**
 * The rendered objects of the pairs a change approves, in path order: those of a batch that starts
 * at merge, and of one that starts later on its own — the approving pull request is where they are
 * reviewed.
 */
export function startingObjects(
  changes: readonly BatchChange[],
  objects: readonly RenderedObject[],
): RenderedObject[] {
  const starting = new Set(changes.filter((c) => c.action !== "detaches").flatMap((c) => c.pairs.map(keyOf)));
  return objects.filter((o) => starting.has(keyOf(o))).sort((a, b) => compareStrings(a.path, b.path));
}
