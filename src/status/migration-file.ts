import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { BATCH_STATES, type BatchStatus, type MigrationStatus } from "../migrate/migration-state.js";
import type { HealthStatus } from "../model/health.js";
import { emitYaml } from "../render/yaml-emitter.js";

/** status/migrations/<name>.yaml */
export function migrationStatusPath(name: string): string {
  return `status/migrations/${name}.yaml`;
}

/** The status file's text: byte-stable for the same status. */
export function migrationStatusText(status: MigrationStatus): string {
  return emitYaml(JSON.parse(JSON.stringify(status)) as Json);
}

/** Reads a status file back; fields it does not know are dropped, a batch with an unknown state is skipped. */
export function readMigrationStatus(value: unknown): MigrationStatus | undefined {
  if (!isJsonMap(value) || typeof value.migration !== "string") return undefined;
  const batches: BatchStatus[] = [];
  for (const entry of asList(value.batches)) {
    const batch = asMap(entry);
    const head = readBatchHead(batch);
    if (!head) continue;
    const apps: Record<string, Record<string, HealthStatus>> = {};
    for (const [app, clusters] of Object.entries(asMap(batch.apps)))
      apps[app] = Object.fromEntries(
        Object.entries(asMap(clusters)).map(([cluster, health]) => [cluster, String(health) as HealthStatus]),
      );
    batches.push({ ...head, apps });
  }
  const detached = asList(value.detached).filter((d): d is string => typeof d === "string");
  return { migration: value.migration, batches, detached };
}

/**
 * What every batch status records besides what it covers — name, state, since, and when present
 * approvedIn, observingSince, reason — read from a status file (a migration's or an upgrade's);
 * undefined for a batch without a name, a time or a state gitfleet knows.
 */
export function readBatchHead(batch: JsonMap): Omit<BatchStatus, "apps"> | undefined {
  const state = BATCH_STATES.find((s) => s === batch.state);
  if (typeof batch.name !== "string" || !state || typeof batch.since !== "string") return undefined;
  const text = (key: string) => (typeof batch[key] === "string" ? { [key]: batch[key] as string } : {});
  return {
    name: batch.name,
    state,
    since: batch.since,
    ...text("approvedIn"),
    ...text("observingSince"),
    ...text("reason"),
  };
}
