import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { groupKind, groupOf } from "../apimachinery/kinds.js";
import { isControlPlaneApp } from "../model/controlplane/app-names.js";
import { compareStrings } from "../model/file-tree.js";
import { describeObject } from "../model/identity.js";
import { PROTECTED_KINDS } from "../model/protected-kinds.js";
import type { Inventory, InventoryEntry } from "./inventory.js";

/** What decides whether a sync may prune. */
export interface PruneSettings {
  /** A sync that would delete more than this share of a cluster's inventory stops (default 30). */
  readonly maxDeletionPercent: number;
  /** allowPrune tokens of fleet.yaml: each lets exactly one blocked deletion set through, whatever its apps. */
  readonly allowedTokens: ReadonlySet<string>;
  /**
   * allowPrune tokens of each app's syncPolicy: a token there lets a deletion set through only when
   * every object in the set belongs to an app that lists it — an app's owners cannot allow the
   * deletion of another app's objects.
   */
  readonly appTokens?: ReadonlyMap<string, ReadonlySet<string>>;
  /** False for apps whose syncPolicy.prune is false: their objects stay when they leave the rendered tree. */
  readonly appPrunes: (app: string) => boolean;
  /**
   * True for an app whose replicas failover moved off the cluster because the probes found it
   * NotReady: its objects leaving that cluster are gitfleet's own decision and do not count against
   * the budget, so a cluster that returns after an outage is cleaned up without a token. (A drain or
   * a NoExecute taint written in the Cluster file is a person's change: the budget applies.)
   */
  readonly failedOver?: (cluster: string, app: string) => boolean;
  /**
   * Objects that point consumers at a producing cluster (an exported service's EndpointSlices): a
   * NotReady producer's go at once, on the traffic clock, so they are not counted against the budget.
   */
  readonly trafficObject?: (identity: string, app: string) => boolean;
}

export const DEFAULT_MAX_DELETION_PERCENT = 30;

export interface PrunePlan {
  /** In the inventory, no longer rendered, and allowed to go: deleted in this order (namespaced first). */
  readonly delete: readonly InventoryEntry[];
  /** No longer rendered, but their app does not prune: kept running and kept in the inventory. */
  readonly retained: readonly InventoryEntry[];
  /** The deletion budget stopped the prune: nothing is deleted until a commit adds the token. */
  readonly blocked?: {
    readonly token: string;
    readonly reasons: readonly string[];
    readonly entries: readonly InventoryEntry[];
  };
}

/**
 * What pruning may delete from one cluster: the inventory's objects that the rendered tree no longer
 * holds — never anything outside the inventory. A deletion set larger than the budget, one that
 * includes a Namespace, PV, PVC or CRD (or a hosted control plane's credentials), or one with an object gitfleet adopted rather than created, is
 * blocked as a whole until a commit names its token in `allowPrune` (fleet.yaml, or the apps of every
 * object in the set). The token digests the cluster, the exact set and `pruneBase` — the source
 * commit the cluster ran when the deletion was reviewed — so it lets through neither a later,
 * different deletion nor the same one after the fleet moved on. Pure.
 */
export function planPrune(
  cluster: string,
  inventory: Inventory,
  desired: ReadonlySet<string>,
  settings: PruneSettings,
  pruneBase?: string,
): PrunePlan {
  const leaving = [...inventory.values()]
    .filter((entry) => !desired.has(entry.identity))
    .sort((a, b) => compareStrings(a.identity, b.identity));
  const retained = leaving.filter((entry) => !settings.appPrunes(entry.app));
  const candidates = leaving.filter((entry) => settings.appPrunes(entry.app));
  if (candidates.length === 0) return { delete: [], retained };
  const reasons: string[] = [];
  const counted = candidates.filter(
    (entry) =>
      !settings.failedOver?.(cluster, entry.app) && !settings.trafficObject?.(entry.identity, entry.app),
  );
  const share = (counted.length / inventory.size) * 100;
  // In whole numbers: (11 / 20) * 100 is 55.00000000000001 in floating point, over a 55% budget it is not.
  if (counted.length > 0 && counted.length * 100 > settings.maxDeletionPercent * inventory.size)
    reasons.push(
      `would delete ${counted.length} of ${inventory.size} objects (${Math.round(share)}%), more than the ${settings.maxDeletionPercent}% budget`,
    );
  const protectedOnes = candidates.filter(
    (entry) => PROTECTED_KINDS.has(groupKindOf(entry)) || holdsCredentials(entry),
  );
  if (protectedOnes.length > 0) reasons.push(`would delete ${protectedOnes.map(describe).join(", ")}`);
  const adopted = candidates.filter((entry) => entry.adopted);
  if (adopted.length > 0)
    reasons.push(
      `would delete what gitfleet adopted and did not create: ${adopted.map(describe).join(", ")}`,
    );
  const token = pruneToken(cluster, candidates, pruneBase);
  if (reasons.length > 0 && !isAllowed(token, candidates, settings))
    return { delete: [], retained, blocked: { token, reasons, entries: candidates } };
  return { delete: deletionOrder(candidates), retained };
}

// fleet.yaml's tokens allow any set; an app's only a set whose every object belongs to an app listing it.
function isAllowed(token: string, entries: readonly InventoryEntry[], settings: PruneSettings): boolean {
  if (settings.allowedTokens.has(token)) return true;
  const apps = settings.appTokens;
  return apps !== undefined && entries.every((entry) => apps.get(entry.app)?.has(token) === true);
}

function describe(entry: InventoryEntry): string {
  return describeObject(entry.kind, entry.namespace, entry.name);
}

/**
 * The token that allows one cluster's exact deletion set, reviewed against one source commit:
 * `prune-` and 12 hex digits.
 */
export function pruneToken(cluster: string, entries: readonly InventoryEntry[], pruneBase?: string): string {
  const text = [cluster, pruneBase ?? "", ...entries.map((e) => e.identity).sort(compareStrings)].join("\n");
  return `prune-${bytesToHex(sha256(new TextEncoder().encode(text))).slice(0, 12)}`;
}

/** allowPrune as written: one token or several, separated by spaces or commas. */
export function parseAllowPrune(text: string | undefined): string[] {
  return (text ?? "").split(/[\s,]+/).filter((token) => token !== "");
}

// A hosted control plane's Secrets: its certificates and keys, generated in the host and nowhere else.
function holdsCredentials(entry: InventoryEntry): boolean {
  return entry.kind === "Secret" && !entry.apiVersion.includes("/") && isControlPlaneApp(entry.app);
}

function groupKindOf(entry: InventoryEntry): string {
  return groupKind(groupOf(entry.apiVersion), entry.kind);
}

// Namespaced objects first, then cluster-scoped ones, Namespaces and CRDs last: the reverse of applying.
function deletionOrder(entries: readonly InventoryEntry[]): InventoryEntry[] {
  const rank = (entry: InventoryEntry) => {
    const groupKind = groupKindOf(entry);
    if (groupKind === "apiextensions.k8s.io/CustomResourceDefinition") return 3;
    if (groupKind === "/Namespace") return 2;
    return entry.namespace === undefined ? 1 : 0;
  };
  return entries.slice().sort((a, b) => rank(a) - rank(b));
}
