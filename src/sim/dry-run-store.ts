import type { JsonMap } from "../apimachinery/json.js";
import type { ApiResource } from "./api-resources.js";
import {
  bucketOf,
  inNamespace,
  inSlotOrder,
  type ObjectKey,
  ObjectStore,
  slot,
  type WatchEvent,
} from "./object-store.js";

/**
 * A member's objects as one dry-run request sees them: every read answers from the member's store
 * with what this request wrote on top, and nothing the request writes reaches that store — no new
 * resourceVersion is taken, no change is logged, no watcher (and so no controller of the simulated
 * world) hears of it. Made for one request and dropped after it, as kube-apiserver runs a dry run
 * through all of admission and stops short of etcd.
 */
export class DryRunStore extends ObjectStore {
  /** What this request wrote, by resource and slot: the object, or null once deleted. */
  private readonly written = new Map<string, Map<string, JsonMap | null>>();

  constructor(private readonly base: ObjectStore) {
    super();
  }

  /** The version the next write would take, never taken. */
  override nextVersion(): string {
    return String(Number(this.base.currentVersion()) + 1);
  }

  override currentVersion(): string {
    return this.base.currentVersion();
  }

  override get(key: ObjectKey): JsonMap | undefined {
    const mine = this.writesTo(key.resource).get(slot(key));
    if (mine === null) return undefined;
    return mine ?? this.base.get(key);
  }

  override list(resource: ApiResource, namespace?: string): JsonMap[] {
    const mine = this.writesTo(resource);
    if (mine.size === 0) return this.base.list(resource, namespace);
    const all = new Map<string, JsonMap>();
    for (const object of this.base.list(resource, undefined)) all.set(slotOf(object), object);
    for (const [at, object] of mine) {
      if (object === null) all.delete(at);
      else all.set(at, object);
    }
    return inNamespace(inSlotOrder(all), resource, namespace);
  }

  override set(key: ObjectKey, object: JsonMap): void {
    this.writesTo(key.resource).set(slot(key), object);
  }

  override delete(key: ObjectKey): void {
    this.writesTo(key.resource).set(slot(key), null);
  }

  /** A dry run opens no watch: it answers from the member's own. */
  override watch(
    version: number,
    listener: (event: WatchEvent) => void,
  ): { backlog: WatchEvent[]; stop: () => void } | undefined {
    return this.base.watch(version, listener);
  }

  private writesTo(resource: ApiResource): Map<string, JsonMap | null> {
    return bucketOf(this.written, resource);
  }
}

function slotOf(object: JsonMap): string {
  const metadata = object.metadata as JsonMap;
  return slot({
    namespace: typeof metadata.namespace === "string" ? metadata.namespace : undefined,
    name: String(metadata.name),
  });
}
