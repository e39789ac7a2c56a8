import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import type { EntryPoints } from "../model/observed-state.js";
import type { ClusterSyncResult } from "./sync-result.js";

// A Service's entry point as a member reports it: the addresses its load balancer was given. Read
// from what the member says, so bounded: a few addresses, each a plain IP or DNS name. Pure.

/** At most this many addresses are kept per Service. */
export const MAX_ENTRY_ADDRESSES = 16;

const ADDRESS = /^[A-Za-z0-9.:-]{1,253}$/;

/** A LoadBalancer Service's ingress IPs and hostnames (IPs first), or undefined when it has none. */
export function entryPointOf(live: JsonMap): readonly string[] | undefined {
  if (live.apiVersion !== "v1" || live.kind !== "Service") return undefined;
  const ingress = asList(asMap(asMap(live.status).loadBalancer).ingress).map((i) => asMap(i));
  const addresses = [
    ...ingress.map((i) => i.ip).filter((ip): ip is string => typeof ip === "string"),
    ...ingress.map((i) => i.hostname).filter((h): h is string => typeof h === "string"),
  ].filter((a) => ADDRESS.test(a));
  const unique = [...new Set(addresses)].slice(0, MAX_ENTRY_ADDRESSES);
  return unique.length > 0 ? unique : undefined;
}

/** At most this many Services' entry points are recorded per cluster. */
export const MAX_ENTRY_POINTS = 10_000;

/** The entry points one sync saw: "namespace/name" → addresses, per LoadBalancer Service. */
export function entryPointsOf(result: ClusterSyncResult): Map<string, readonly string[]> {
  const found = new Map<string, readonly string[]>();
  for (const o of result.objects) {
    if (!o.entryPoint || !o.identity.startsWith("/Service/")) continue;
    const [, , namespace, name] = o.identity.split("/");
    if (namespace && name && found.size < MAX_ENTRY_POINTS) found.set(`${namespace}/${name}`, o.entryPoint);
  }
  return found;
}

/**
 * A recorded `observed.services` block read back (a status file, an agent's report): untrusted, so
 * bounded in count and shape; entries that do not read are left out. Undefined when there is none.
 */
export function readEntryPoints(value: Json | undefined): EntryPoints | undefined {
  if (!isJsonMap(value)) return undefined;
  const read = new Map<string, readonly string[]>();
  for (const [key, addresses] of Object.entries(value)) {
    if (read.size >= MAX_ENTRY_POINTS) break;
    if (!SERVICE_KEY.test(key) || !Array.isArray(addresses)) continue;
    const valid = addresses
      .filter((a): a is string => typeof a === "string" && ADDRESS.test(a))
      .slice(0, MAX_ENTRY_ADDRESSES);
    if (valid.length > 0) read.set(key, valid);
  }
  return read.size > 0 ? read : undefined;
}

const SERVICE_KEY = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
