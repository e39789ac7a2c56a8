import { asMap, isJsonMap, type JsonMap } from "../apimachinery/json.js";
import { readCapacityRecord } from "../model/node-capacity.js";
import { readServedApis } from "../model/served-apis.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import { readEntryPoints } from "../sync/entry-points.js";

// A member's last readings — its capacity (node pools), the APIs it serves, its exported services'
// entry points, when its credential stops working — outlive an outage: while it does not answer, its status file keeps what it last
// reported, marked `staleSince` from the first sync that found it unreachable. Scheduling divides by
// them as by any reading (the member was read: nothing is provisional), and a reading that differs
// when it answers again is a fluctuation like any other (docs/scheduling.md, the Steady rules).

/**
 * The readings of a cluster's previous observed block, each checked as scheduling reads it, to carry
 * into its new block. `staleAt`: the member did not answer at this time — the readings are marked
 * stale since then, unless they were already. Without it they are kept as they were. Pure.
 */
export function carriedReadings(previousBlock: string | undefined, staleAt?: number): JsonMap {
  const previous = observedOf(previousBlock);
  if (!previous) return {};
  const carried: JsonMap = {};
  if (readCapacityRecord(previous.capacity) && isJsonMap(previous.capacity))
    carried.capacity = previous.capacity;
  if (readServedApis(previous.apis) && isJsonMap(previous.apis)) carried.apis = previous.apis;
  if (readEntryPoints(previous.services) && isJsonMap(previous.services))
    carried.services = previous.services;
  // The credential too: a member that stops answering because its credential expired says so.
  const credential = asMap(previous.credential);
  if (typeof credential.notAfter === "string" && typeof credential.fingerprint === "string")
    carried.credential = previous.credential as JsonMap;
  if (Object.keys(carried).length === 0) return {};
  const since =
    readSince(previous.staleSince) ?? (staleAt === undefined ? undefined : new Date(staleAt).toISOString());
  return { ...(since ? { staleSince: since } : {}), ...carried };
}

function readSince(value: unknown): string | undefined {
  return typeof value === "string" && value.length <= 40 && !Number.isNaN(Date.parse(value))
    ? value
    : undefined;
}

function observedOf(block: string | undefined): JsonMap | undefined {
  if (block === undefined) return undefined;
  try {
    const observed = asMap(readEmittedYaml(block)).observed;
    return isJsonMap(observed) ? observed : undefined;
  } catch {
    return undefined;
  }
}
