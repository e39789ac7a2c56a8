/**
 * How strategic merge patch treats each field of the built-in kinds gitfleet patches, transcribed
 * from the `patchStrategy` / `patchMergeKey` tags of the Kubernetes 1.32 API types. Fields not listed
 * behave as for an unknown type: maps merge key by key, lists are replaced whole — which is also how
 * kustomize treats custom resources without a schema.
 */
export type FieldSchema = MapSchema | ListSchema;

/** A map (object) and the schemas of the fields that need one. */
export interface MapSchema {
  readonly kind: "map";
  readonly fields: Readonly<Record<string, FieldSchema>>;
}

/** A list: merged by a key (or as a set, for scalars) or replaced whole. */
export interface ListSchema {
  readonly kind: "list";
  readonly strategy: "merge" | "replace";
  /** For lists of maps merged by key: the field that identifies an element. Absent for lists of scalars. */
  readonly mergeKey?: string;
  readonly items?: MapSchema;
}

const map = (fields: Record<string, FieldSchema> = {}): MapSchema => ({ kind: "map", fields });
const mergeBy = (mergeKey: string, items: MapSchema = map()): ListSchema => ({
  kind: "list",
  strategy: "merge",
  mergeKey,
  items,
});
const scalarSet: ListSchema = { kind: "list", strategy: "merge" };

const objectMeta = map({ finalizers: scalarSet, ownerReferences: mergeBy("uid") });

const container = map({
  ports: mergeBy("containerPort"),
  env: mergeBy("name"),
  volumeMounts: mergeBy("mountPath"),
  volumeDevices: mergeBy("devicePath"),
});

const podSpec = map({
  containers: mergeBy("name", container),
  initContainers: mergeBy("name", container),
  ephemeralContainers: mergeBy("name", container),
  volumes: mergeBy("name"),
  imagePullSecrets: mergeBy("name"),
  hostAliases: mergeBy("ip"),
  topologySpreadConstraints: mergeBy("topologyKey"),
  resourceClaims: mergeBy("name"),
  schedulingGates: mergeBy("name"),
});

const podTemplate = map({ metadata: objectMeta, spec: podSpec });

const workload = (spec: Record<string, FieldSchema> = {}) =>
  map({ metadata: objectMeta, spec: map({ template: podTemplate, ...spec }) });

/** Root schemas by "group/Kind" ("" group for core). */
export const BUILT_IN_SCHEMAS: ReadonlyMap<string, MapSchema> = new Map([
  ["/Pod", map({ metadata: objectMeta, spec: podSpec })],
  ["/PodTemplate", map({ metadata: objectMeta, template: podTemplate })],
  ["/ReplicationController", workload()],
  ["apps/Deployment", workload()],
  ["apps/StatefulSet", workload()],
  ["apps/DaemonSet", workload()],
  ["apps/ReplicaSet", workload()],
  ["batch/Job", workload()],
  [
    "batch/CronJob",
    map({
      metadata: objectMeta,
      spec: map({ jobTemplate: map({ metadata: objectMeta, spec: map({ template: podTemplate }) }) }),
    }),
  ],
  ["/Service", map({ metadata: objectMeta, spec: map({ ports: mergeBy("port") }) })],
  [
    "/ServiceAccount",
    map({ metadata: objectMeta, secrets: mergeBy("name"), imagePullSecrets: mergeBy("name") }),
  ],
  ["/ConfigMap", map({ metadata: objectMeta })],
  ["/Secret", map({ metadata: objectMeta })],
  ["/Namespace", map({ metadata: objectMeta })],
]);

/** The schema of a built-in kind, or undefined for kinds (CRDs) merged without one. */
export function schemaFor(group: string, kind: string): MapSchema | undefined {
  return BUILT_IN_SCHEMAS.get(`${group}/${kind}`);
}
