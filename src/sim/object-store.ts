import type { JsonMap } from "../apimachinery/json.js";
import type { ApiResource } from "./api-resources.js";

/** Where an object lives: its resource, namespace (undefined for cluster-scoped) and name. */
export interface ObjectKey {
  readonly resource: ApiResource;
  readonly namespace: string | undefined;
  readonly name: string;
}

/** A change to one object, as a watch delivers it. */
export interface WatchEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly resource: ApiResource;
  readonly object: JsonMap;
  /** The resourceVersion of the change. */
  readonly version: number;
}

/** How many changes are kept for watches that resume; older resourceVersions get 410 Gone. */
const EVENT_LOG_SIZE = 10_000;

/**
 * A member's objects, per resource, with the one resourceVersion counter a real API server keeps
 * (etcd's revision): every write takes the next number, so versions order all changes. Every change
 * is logged (the most recent EVENT_LOG_SIZE) and told to the watchers.
 */
export class ObjectStore {
  private revision = 0;
  private readonly byResource = new Map<string, Map<string, JsonMap>>();
  /** Each bucket's objects in name order, until it changes: lists are frequent, writes cheap. */
  private readonly sorted = new WeakMap<Map<string, JsonMap>, JsonMap[]>();
  private readonly log: WatchEvent[] = [];
  private readonly watchers = new Set<(event: WatchEvent) => void>();

  /** Takes the next resourceVersion. */
  nextVersion(): string {
    this.revision++;
    return String(this.revision);
  }

  /** The latest resourceVersion handed out. */
  currentVersion(): string {
    return String(this.revision);
  }

  get(key: ObjectKey): JsonMap | undefined {
    return this.bucket(key.resource).get(slot(key));
  }

  /** Objects of a resource, in one namespace or all, ordered by namespace and name. */
  list(resource: ApiResource, namespace?: string): JsonMap[] {
    const bucket = this.bucket(resource);
    let all = this.sorted.get(bucket);
    if (!all) {
      all = inSlotOrder(bucket);
      this.sorted.set(bucket, all);
    }
    return inNamespace(all, resource, namespace);
  }

  /** Stores an object whose metadata.resourceVersion was just taken. */
  set(key: ObjectKey, object: JsonMap): void {
    const bucket = this.bucket(key.resource);
    const type = bucket.has(slot(key)) ? "MODIFIED" : "ADDED";
    bucket.set(slot(key), object);
    this.sorted.delete(bucket);
    this.emit({ type, resource: key.resource, object, version: versionOf(object) });
  }

  /** Removes an object; its DELETED event carries it with a resourceVersion of its own. */
  delete(key: ObjectKey): void {
    const bucket = this.bucket(key.resource);
    const object = bucket.get(slot(key));
    if (!object) return;
    bucket.delete(slot(key));
    this.sorted.delete(bucket);
    const last = {
      ...object,
      metadata: { ...(object.metadata as JsonMap), resourceVersion: this.nextVersion() },
    };
    this.emit({ type: "DELETED", resource: key.resource, object: last, version: versionOf(last) });
  }

  /**
   * The changes after `version`, then every later one as it happens, until the returned function is
   * called. Undefined when changes after `version` are no longer kept (the caller answers 410 Gone).
   */
  watch(
    version: number,
    listener: (event: WatchEvent) => void,
  ): { backlog: WatchEvent[]; stop: () => void } | undefined {
    const oldest = this.log[0]?.version ?? this.revision + 1;
    if (version < oldest - 1 && this.log.length === EVENT_LOG_SIZE) return undefined;
    const backlog = this.log.filter((event) => event.version > version);
    this.watchers.add(listener);
    return { backlog, stop: () => this.watchers.delete(listener) };
  }

  private emit(event: WatchEvent): void {
    this.log.push(event);
    if (this.log.length > EVENT_LOG_SIZE) this.log.shift();
    for (const watcher of this.watchers) watcher(event);
  }

  private bucket(resource: ApiResource): Map<string, JsonMap> {
    return bucketOf(this.byResource, resource);
  }
}

function versionOf(object: JsonMap): number {
  return Number((object.metadata as JsonMap).resourceVersion);
}

/** Where an object sits in its resource's bucket: its namespace and name. */
export function slot(key: Pick<ObjectKey, "namespace" | "name">): string {
  return `${key.namespace ?? ""}\u0000${key.name}`;
}

/** A resource's bucket of `buckets`, made empty the first time it is asked for. */
export function bucketOf<T>(buckets: Map<string, Map<string, T>>, resource: ApiResource): Map<string, T> {
  const id = `${resource.group}/${resource.name}`;
  let bucket = buckets.get(id);
  if (!bucket) {
    bucket = new Map();
    buckets.set(id, bucket);
  }
  return bucket;
}

/** A bucket's objects ordered by namespace and name. */
export function inSlotOrder(bucket: Iterable<[string, JsonMap]>): JsonMap[] {
  return [...bucket].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, object]) => object);
}

/** A resource's objects in one namespace, or all of them (a copy either way). */
export function inNamespace(
  objects: readonly JsonMap[],
  resource: ApiResource,
  namespace?: string,
): JsonMap[] {
  if (namespace === undefined || !resource.namespaced) return [...objects];
  return objects.filter((object) => (object.metadata as JsonMap).namespace === namespace);
}
