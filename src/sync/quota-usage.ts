import { asMap, type JsonMap } from "../apimachinery/json.js";
import { isQuantity } from "../apimachinery/quantity.js";
import { compareStrings } from "../model/file-tree.js";
import type { ClusterSyncResult, QuotaUsage } from "./sync-result.js";

// A ResourceQuota's limits and usage as its member reports them (status.hard, status.used), read
// after each apply: what a FederatedResourceQuota's namespace uses in the cluster. Read from what
// the member says, so bounded: a few resource names, each value a quantity. Pure.

/** At most this many resources are kept per quota. */
export const MAX_QUOTA_RESOURCES = 32;

const RESOURCE = /^[a-z0-9][a-z0-9./_-]{0,99}$/;

/** A live ResourceQuota's status, or undefined for any other object or before the member counted it. */
export function quotaUsageOf(live: JsonMap): QuotaUsage | undefined {
  if (live.apiVersion !== "v1" || live.kind !== "ResourceQuota") return undefined;
  const status = asMap(live.status);
  const used = quantities(asMap(status.used));
  return Object.keys(used).length > 0 ? { hard: quantities(asMap(status.hard)), used } : undefined;
}

/** The quotas one sync saw: "namespace/name" → limits and usage, sorted. */
export function quotaUsageRecord(result: ClusterSyncResult): JsonMap | undefined {
  const found: [string, QuotaUsage][] = [];
  for (const o of result.objects) {
    if (!o.quotaUsage || !o.identity.startsWith("/ResourceQuota/")) continue;
    const [, , namespace, name] = o.identity.split("/");
    if (namespace && name) found.push([`${namespace}/${name}`, o.quotaUsage]);
  }
  if (found.length === 0) return undefined;
  return Object.fromEntries(
    found
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([key, usage]) => [key, { hard: { ...usage.hard }, used: { ...usage.used } }]),
  );
}

function quantities(list: JsonMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(list).sort(compareStrings).slice(0, MAX_QUOTA_RESOURCES)) {
    const value = list[key];
    const text = typeof value === "number" ? String(value) : value;
    if (RESOURCE.test(key) && typeof text === "string" && text.length <= 64 && isQuantity(text))
      out[key] = text;
  }
  return out;
}
