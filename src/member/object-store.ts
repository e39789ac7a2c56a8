import type { JsonMap } from "../model/json.js";
import type { ApiResource } from "./api-resources.js";

/** Where an object lives: its resource, namespace (undefined for cluster-scoped) and name. */
export interface ObjectKey {
  readonly resource: ApiResource;
  readonly namespace: string | undefined;
  readonly name: string;
}

/**
 * A member's objects, per resource, with the one resourceVersion counter a real API server keeps
 * (etcd's revision): every write takes the next number, so versions order all changes.
 */
export class ObjectStore {
  private revision = 0;
  private readonly byResource = new Map<string, Map<string, JsonMap>>();

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
    const all = [...this.bucket(resource)]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, object]) => object);
    if (namespace === undefined || !resource.namespaced) return all;
    return all.filter((object) => (object.metadata as JsonMap).namespace === namespace);
  }

  set(key: ObjectKey, object: JsonMap): void {
    this.bucket(key.resource).set(slot(key), object);
  }

  delete(key: ObjectKey): void {
    this.bucket(key.resource).delete(slot(key));
  }

  private bucket(resource: ApiResource): Map<string, JsonMap> {
    const id = `${resource.group}/${resource.name}`;
    let bucket = this.byResource.get(id);
    if (!bucket) {
      bucket = new Map();
      this.byResource.set(id, bucket);
    }
    return bucket;
  }
}

function slot(key: ObjectKey): string {
  return `${key.namespace ?? ""}\u0000${key.name}`;
}
