import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { compareStrings } from "../model/file-tree.js";
import { asList, asMap } from "../model/json.js";
import { emitYaml } from "../render/yaml-emitter.js";

/** One object gitfleet applied to a cluster: what pruning may delete, and only this. */
export interface InventoryEntry {
  /** group/kind/namespace/name, as rendered objects name themselves. */
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
}

/** A cluster's inventory, by identity. */
export type Inventory = ReadonlyMap<string, InventoryEntry>;

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

const FIELDS = ["identity", "apiVersion", "app", "uid", "digest"] as const;

/**
 * The inventory as text, one object per line (`identity apiVersion app uid digest`), sorted: the
 * ConfigMap's data and the status branch file hold the same lines, so either can rebuild the other.
 */
export function inventoryLines(inventory: Inventory): string {
  return [...inventory.values()]
    .sort((a, b) => compareStrings(a.identity, b.identity))
    .map((entry) => FIELDS.map((field) => entry[field] || "-").join(" "))
    .join("\n");
}

/** Reads what inventoryLines wrote; lines that do not parse are skipped (the next sync rewrites them). */
export function parseInventoryLines(text: string): Inventory {
  const inventory = new Map<string, InventoryEntry>();
  for (const line of text.split("\n")) {
    const [identity, apiVersion, app, uid, digest] = line.trim().split(/\s+/);
    if (!identity || !apiVersion || !app || !uid || !digest) continue;
    const parts = identity.split("/");
    if (parts.length !== 4) continue;
    const [, kind = "", namespace = "", name = ""] = parts;
    inventory.set(identity, {
      identity,
      apiVersion,
      kind,
      namespace: namespace === "" ? undefined : namespace,
      name,
      app,
      uid: uid === "-" ? "" : uid,
      digest: digest === "-" ? "" : digest,
    });
  }
  return inventory;
}

/** status/inventory/<cluster>.yaml: the cluster, the source commit synced, and the lines. */
export function inventoryStatusText(cluster: string, sourceCommit: string, inventory: Inventory): string {
  const lines = inventoryLines(inventory);
  return emitYaml({
    cluster,
    sourceCommit,
    objects: inventory.size,
    inventory: lines === "" ? [] : lines.split("\n"),
  });
}

/** Reads status/inventory/<cluster>.yaml's lines back. */
export function inventoryFromStatus(value: unknown): Inventory {
  return parseInventoryLines(asList(asMap(value).inventory).map(String).join("\n"));
}
