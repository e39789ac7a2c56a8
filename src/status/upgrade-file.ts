import { asList, asMap, isJsonMap } from "../apimachinery/json.js";
import type { UpgradeBatchStatus, UpgradeStatus } from "../migrate/control-plane-upgrade.js";
import type { HealthStatus } from "../model/health.js";
import { UPGRADES_DIRECTORY } from "./layout.js";
import { readBatchHead } from "./migration-file.js";
import { readStatusYaml, statusYaml } from "./status-yaml.js";

/** status/upgrades/<name>.yaml */
export function upgradeStatusPath(name: string): string {
  return `${UPGRADES_DIRECTORY}${name}.yaml`;
}

/** The status file's text: byte-stable for the same status. */
export function upgradeStatusText(status: UpgradeStatus): string {
  return statusYaml(status);
}

const HEALTH: readonly HealthStatus[] = ["Healthy", "Progressing", "Degraded", "Missing", "Unknown"];

/**
 * Reads a status file's text back; undefined when it does not read as one. Fields it does not know
 * are dropped, a batch with an unknown state is skipped, a health it does not know reads Unknown.
 */
export function readUpgradeStatus(text: string | undefined): UpgradeStatus | undefined {
  const value = readStatusYaml(text);
  if (!isJsonMap(value) || typeof value.upgrade !== "string" || typeof value.version !== "string")
    return undefined;
  const batches: UpgradeBatchStatus[] = [];
  for (const entry of asList(value.batches)) {
    const batch = asMap(entry);
    const head = readBatchHead(batch);
    if (!head) continue;
    const clusters: Record<string, HealthStatus> = {};
    for (const [cluster, health] of Object.entries(asMap(batch.clusters)))
      clusters[cluster] = HEALTH.find((h) => h === health) ?? "Unknown";
    batches.push({ ...head, clusters });
  }
  return { upgrade: value.upgrade, version: value.version, batches };
}
