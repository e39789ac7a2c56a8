import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { asList, asMap, isJsonMap, type JsonMap } from "../apimachinery/json.js";
import { groupOf } from "../apimachinery/kinds.js";
import {
  explainInvalidApiVersion,
  explainInvalidDns1123Label,
  explainInvalidFleetName,
  explainInvalidKind,
  explainInvalidPathSegmentName,
} from "../apimachinery/names.js";
import { compareStrings } from "../model/file-tree.js";
import { identityOf } from "../model/identity.js";
import { emitYaml } from "../render/yaml-emitter.js";

/** One object gitfleet applied to a cluster: what pruning may delete, and only this. */
export interface InventoryEntry {
  /** group/kind/namespace/name, as rendered objects name themselves: always derived, never read. */
  readonly identity: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly app: string;
  /** The uid gitfleet saw after applying: deletion is conditional on it, so a look-alike made later is never deleted. */
  readonly uid: string;
  /** Digest of the rendered text last applied: an unchanged object is not applied again unless it drifted. */
  readonly digest: string;
  /** gitfleet took it over (conflictResolution: Adopt, a migration): it did not create it, so it never deletes it without a token. */
  readonly adopted?: boolean;
}

/** A cluster's inventory, by identity. */
export type Inventory = ReadonlyMap<string, InventoryEntry>;

/** What the member's inventory says besides its entries. */
export interface InventoryRecord {
  /** The fleet cluster that owns the member: a member another Cluster owns is not synced. */
  readonly cluster: string | undefined;
  /** The source commit of the last sync that pruned what it had to (or had nothing to prune): prune tokens are bound to it. */
  readonly pruneBase: string | undefined;
  readonly inventory: Inventory;
}

/** Where the inventory lives in a member: a ConfigMap in gitfleet's own namespace. */
export const INVENTORY_NAMESPACE = "gitfleet-system";
export const INVENTORY_CONFIGMAP = "gitfleet-inventory";

/** status/inventory/<cluster>.yaml on the status branch. */
export function inventoryPath(cluster: string): string {
  return `status/inventory/${cluster}.yaml`;
}

/** A short digest of a rendered object's text. */
export function textDigest(text: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(text))).slice(0, 16);
}

/**
 * The inventory's entries as structured data, sorted by identity: one mapping per object, fields by
 * name. No name or kind can add an entry of its own (the old space-separated lines could be
 * injected into); the identity is not stored but derived again from the fields on reading.
 */
export function inventoryEntries(inventory: Inventory): JsonMap[] {
  return [...inventory.values()]
    .sort((a, b) => compareStrings(a.identity, b.identity))
    .map((entry) => ({
      apiVersion: entry.apiVersion,
      kind: entry.kind,
      ...(entry.namespace === undefined ? {} : { namespace: entry.namespace }),
      name: entry.name,
      app: entry.app,
      uid: entry.uid,
      digest: entry.digest,
      ...(entry.adopted ? { adopted: true } : {}),
    }));
}

/** Whose inventory a member holds, the commit synced, and the commit its prune tokens are bound to. */
export interface InventoryOwner {
  readonly cluster: string;
  readonly sourceCommit: string;
  readonly pruneBase: string | undefined;
}

/** The ConfigMap data of a member's inventory: its cluster, the commits, and the entries as JSON. */
export function inventoryData(record: InventoryOwner, inventory: Inventory): Record<string, string> {
  return {
    cluster: record.cluster,
    sourceCommit: record.sourceCommit,
    ...(record.pruneBase ? { pruneBase: record.pruneBase } : {}),
    entries: JSON.stringify(inventoryEntries(inventory)),
  };
}

/** Reads a member's inventory ConfigMap data back; entries that do not validate are left out (and so never pruned). */
export function inventoryFromData(data: JsonMap): InventoryRecord {
  let entries: unknown[] = [];
  if (typeof data.entries === "string") {
    try {
      entries = asList(JSON.parse(data.entries));
    } catch {
      entries = [];
    }
  } else if (typeof data.inventory === "string") entries = legacyLines(data.inventory);
  return {
    cluster: clusterOf(data.cluster),
    pruneBase: commitOf(data.pruneBase),
    inventory: readEntries(entries),
  };
}

/**
 * The most entry text one inventory ConfigMap holds. A ConfigMap's data may hold 1 MiB, so a member
 * with more than a few thousand of gitfleet's objects has its entries split over parts.
 */
export const INVENTORY_PART_BYTES = 512 * 1024;

/** The most parts a member's inventory is read from (128 MiB of entries); more is not gitfleet's. */
export const MAX_INVENTORY_PARTS = 256;

/** The ConfigMap that holds a part of a large inventory (1-based). */
export function inventoryPartName(index: number): string {
  return `${INVENTORY_CONFIGMAP}-part-${index}`;
}

/**
 * A member's inventory as ConfigMaps: the main one, which holds the entries itself when they fit in
 * one part, else the sha256 of each part in order (`parts`), and the parts' entries. Parts are written
 * before the main ConfigMap, so a write cut short leaves a main ConfigMap whose digests do not match
 * and is read as no inventory at all.
 */
export interface InventoryConfigMaps {
  readonly main: Record<string, string>;
  readonly parts: readonly string[];
}

export function inventoryConfigMaps(
  record: InventoryOwner,
  inventory: Inventory,
  partBytes = INVENTORY_PART_BYTES,
): InventoryConfigMaps {
  const head = {
    cluster: record.cluster,
    sourceCommit: record.sourceCommit,
    ...(record.pruneBase ? { pruneBase: record.pruneBase } : {}),
  };
  const entries = inventoryEntries(inventory).map((entry) => JSON.stringify(entry));
  const parts: string[] = [];
  let part: string[] = [];
  let size = 2;
  // `size` is the length of `[${part.join(",")}]`.
  for (const entry of entries) {
    if (part.length > 0 && size + 1 + entry.length > partBytes) {
      parts.push(`[${part.join(",")}]`);
      part = [];
      size = 2;
    }
    size += (part.length > 0 ? 1 : 0) + entry.length;
    part.push(entry);
  }
  parts.push(`[${part.join(",")}]`);
  if (parts.length === 1) return { main: { ...head, entries: parts[0] as string }, parts: [] };
  return { main: { ...head, parts: JSON.stringify(parts.map(partDigest)) }, parts };
}

/** The digests of the parts a main inventory ConfigMap names (none: it holds its entries); undefined when they are not valid. */
export function inventoryPartDigests(main: JsonMap): readonly string[] | undefined {
  if (main.parts === undefined) return [];
  if (typeof main.parts !== "string") return undefined;
  let digests: unknown;
  try {
    digests = JSON.parse(main.parts);
  } catch {
    return undefined;
  }
  if (!Array.isArray(digests) || digests.length === 0 || digests.length > MAX_INVENTORY_PARTS)
    return undefined;
  return digests.every((d) => typeof d === "string" && /^[0-9a-f]{64}$/.test(d))
    ? (digests as string[])
    : undefined;
}

/**
 * Reads an inventory from its main ConfigMap's data and its parts' (in order): undefined when a part
 * is missing or is not the one the main ConfigMap names (a write cut short, or someone's edit).
 */
export function inventoryFromConfigMaps(
  main: JsonMap,
  parts: readonly (JsonMap | undefined)[],
): InventoryRecord | undefined {
  const digests = inventoryPartDigests(main);
  if (digests === undefined || parts.length !== digests.length) return undefined;
  if (digests.length === 0) return inventoryFromData(main);
  const texts: string[] = [];
  for (const [i, part] of parts.entries()) {
    const text = part?.entries;
    if (typeof text !== "string" || partDigest(text) !== digests[i]) return undefined;
    texts.push(text);
  }
  const entries: unknown[] = [];
  for (const text of texts) {
    try {
      for (const entry of asList(JSON.parse(text))) entries.push(entry);
    } catch {
      return undefined;
    }
  }
  return {
    cluster: clusterOf(main.cluster),
    pruneBase: commitOf(main.pruneBase),
    inventory: readEntries(entries),
  };
}

function partDigest(text: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(text)));
}

/** status/inventory/<cluster>.yaml: the cluster, the source commit synced, the prune base, the entries. */
export function inventoryStatusText(
  cluster: string,
  sourceCommit: string,
  inventory: Inventory,
  pruneBase?: string,
): string {
  return emitYaml({
    cluster,
    sourceCommit,
    ...(pruneBase ? { pruneBase } : {}),
    objects: inventory.size,
    entries: inventoryEntries(inventory),
  });
}

/** Reads status/inventory/<cluster>.yaml back, validating every entry. */
export function inventoryFromStatus(value: unknown): InventoryRecord {
  const status = asMap(value);
  return {
    cluster: clusterOf(status.cluster),
    pruneBase: commitOf(status.pruneBase),
    inventory: readEntries(asList(status.entries)),
  };
}

// The owning fleet cluster an inventory names, when it is a valid cluster name.
function clusterOf(value: unknown): string | undefined {
  return typeof value === "string" && !explainInvalidFleetName(value) ? value : undefined;
}

// Entries as the API server would accept their objects: a valid apiVersion, kind and name, a DNS
// label namespace, a valid app name, a uid and digest of the expected shapes. Anything else is
// dropped: an entry gitfleet cannot trust is one it never deletes.
function readEntries(values: readonly unknown[]): Map<string, InventoryEntry> {
  const inventory = new Map<string, InventoryEntry>();
  for (const value of values) {
    const entry = readEntry(value);
    if (entry) inventory.set(entry.identity, entry);
  }
  return inventory;
}

// Each field's rule: a string it accepts.
const ENTRY_FIELDS: readonly [string, (value: string) => boolean][] = [
  ["apiVersion", (v) => !explainInvalidApiVersion(v)],
  ["kind", (v) => !explainInvalidKind(v)],
  ["name", (v) => v !== "" && !explainInvalidPathSegmentName(v)],
  ["app", (v) => !explainInvalidFleetName(v)],
  ["uid", (v) => /^[A-Za-z0-9-]{0,128}$/.test(v)],
  ["digest", (v) => /^[0-9a-f]{0,64}(~[a-z]{1,16})?$/.test(v)],
];

function readEntry(value: unknown): InventoryEntry | undefined {
  if (!isJsonMap(value)) return undefined;
  for (const [field, accepts] of ENTRY_FIELDS) {
    const text = value[field];
    if (typeof text !== "string" || !accepts(text)) return undefined;
  }
  const { namespace, adopted } = value;
  if (namespace !== undefined && (typeof namespace !== "string" || explainInvalidDns1123Label(namespace)))
    return undefined;
  // Every field was checked to be a string above.
  const { apiVersion, kind, name, app, uid, digest } = value as {
    [field in "apiVersion" | "kind" | "name" | "app" | "uid" | "digest"]: string;
  };
  return {
    identity: identityOf(groupOf(apiVersion), kind, namespace, name),
    apiVersion,
    kind,
    namespace,
    name,
    app,
    uid,
    digest,
    ...(adopted === true ? { adopted: true } : {}),
  };
}

// The space-separated lines of inventories written before entries were structured, read into the
// same shape and validated alike (an injected line fails the kind or name rules).
function legacyLines(text: string): JsonMap[] {
  const entries: JsonMap[] = [];
  for (const line of text.split("\n")) {
    const [identity, apiVersion, app, uid, digest, extra] = line.trim().split(/\s+/);
    if (!identity || !apiVersion || !app || !uid || !digest || extra !== undefined) continue;
    const [group, kind = "", namespace = "", name = "", more] = identity.split("/");
    if (more !== undefined || group !== groupOf(apiVersion)) continue;
    entries.push({
      apiVersion,
      kind,
      ...(namespace === "" ? {} : { namespace }),
      name,
      app,
      uid: uid === "-" ? "" : uid,
      digest: digest === "-" ? "" : digest,
    });
  }
  return entries;
}

function commitOf(value: unknown): string | undefined {
  return typeof value === "string" && /^[0-9a-f]{40}$/.test(value) ? value : undefined;
}
