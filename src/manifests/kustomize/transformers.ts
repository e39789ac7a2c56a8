import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { type BuiltObject, nameOf, namespaceOf, originalNameOf, withId } from "./built-object.js";
import { isClusterScoped } from "./cluster-scoped.js";
import { setLabels } from "./label-fields.js";

// The built-in transformers of one kustomization, in kustomize's order: namespace,
// namePrefix/nameSuffix, labels, annotations (then the JSON 6902 patches, in patches.ts), replicas,
// images. Each works on the objects its kustomization holds — its own resources and what its bases
// built.

/** Kinds whose pod template and selector kustomize's commonLabels reach. */
const SELECTOR_KINDS = new Set(["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"]);
const REPLICA_KINDS = new Set(["Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"]);

/** A field of the kustomization that cannot be applied, by its path in the file, and why. */
export interface TransformError {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** Namespace, namePrefix/nameSuffix, labels and annotations, in kustomize's order. Pure. */
export function applyMetadataTransformers(objects: readonly BuiltObject[], spec: JsonMap): BuiltObject[] {
  // A kustomization that only gathers its bases changes nothing: its objects are not copied.
  const fields = ["namespace", "namePrefix", "nameSuffix", "labels", "commonLabels", "commonAnnotations"];
  if (!fields.some((field) => spec[field] !== undefined)) return [...objects];
  let built = objects.map((o) => ({ ...o, object: structuredClone(o.object) as JsonMap }));
  if (typeof spec.namespace === "string" && spec.namespace !== "")
    built = setNamespace(built, spec.namespace);
  const prefix = typeof spec.namePrefix === "string" ? spec.namePrefix : "";
  const suffix = typeof spec.nameSuffix === "string" ? spec.nameSuffix : "";
  if (prefix || suffix) built = rename(built, prefix, suffix);
  labelEntries(spec).forEach(({ labels, selectors, templates }) => {
    addLabels(built, labels, selectors, templates);
  });
  if (isJsonMap(spec.commonLabels)) addLabels(built, strings(spec.commonLabels), true, true);
  if (isJsonMap(spec.commonAnnotations)) addAnnotations(built, strings(spec.commonAnnotations));
  return built;
}

/** Replicas and images, which kustomize runs after the JSON 6902 patches. Pure. */
export function applyWorkloadTransformers(
  objects: readonly BuiltObject[],
  spec: JsonMap,
  errors: TransformError[] = [],
): BuiltObject[] {
  if (spec.replicas === undefined && spec.images === undefined) return [...objects];
  const built = objects.map((o) => ({ ...o, object: structuredClone(o.object) as JsonMap }));
  asList(spec.replicas).forEach((entry, index) => {
    if (isJsonMap(entry) && !setReplicas(built, entry))
      errors.push({
        path: ["replicas", index, "name"],
        message: `no Deployment, StatefulSet, ReplicaSet or ReplicationController is named ${JSON.stringify(entry.name)}`,
      });
  });
  for (const entry of asList(spec.images).filter(isJsonMap)) setImages(built, entry);
  return built;
}

/**
 * The `labels` entries, before commonLabels (as kustomize v5 orders them). A key several entries
 * set takes the last entry's value wherever any of them puts it. kustomize v5.5 shares field lists
 * between entries in a way that is not reproduced here: with more than one entry its output can
 * differ; one entry per kustomization matches kubectl kustomize.
 */
function labelEntries(
  spec: JsonMap,
): { labels: Record<string, string>; selectors: boolean; templates: boolean }[] {
  const byKey = new Map<string, { value: string; selectors: boolean; templates: boolean }>();
  for (const entry of asList(spec.labels).filter(isJsonMap)) {
    const selectors = entry.includeSelectors === true;
    const templates = selectors || entry.includeTemplates === true;
    for (const [key, value] of Object.entries(strings(entry.pairs))) {
      const before = byKey.get(key);
      byKey.set(key, {
        value,
        selectors: selectors || (before?.selectors ?? false),
        templates: templates || (before?.templates ?? false),
      });
    }
  }
  return [...byKey].map(([key, { value, selectors, templates }]) => ({
    labels: { [key]: value },
    selectors,
    templates,
  }));
}

function strings(value: Json | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(asMap(value))) out[key] = v === null ? "" : String(v);
  return out;
}

function metadata(object: JsonMap): JsonMap {
  if (!isJsonMap(object.metadata)) object.metadata = {};
  return object.metadata as JsonMap;
}

// The map at a path, created on the way when `create` is set; undefined when it is missing.
function mapAt(root: JsonMap, path: readonly string[], create: boolean): JsonMap | undefined {
  let node = root;
  for (const key of path) {
    if (!isJsonMap(node[key])) {
      if (!create) return undefined;
      node[key] = {};
    }
    node = node[key] as JsonMap;
  }
  return node;
}

// Sets the namespace of every namespaced object, and of RoleBinding subjects named "default" (the
// ServiceAccount every namespace has), as kustomize's namespace transformer does by default.
function setNamespace(objects: readonly BuiltObject[], namespace: string): BuiltObject[] {
  return objects.map((built) => {
    const { object } = built;
    const kind = String(object.kind);
    if (kind === "RoleBinding" || kind === "ClusterRoleBinding")
      for (const subject of asList(object.subjects).filter(isJsonMap))
        if (subject.name === "default") subject.namespace = namespace;
    if (isClusterScoped(kind)) return built;
    const before = { name: nameOf(object), namespace: namespaceOf(object) };
    metadata(object).namespace = namespace;
    return withId(built, before);
  });
}

// Prefixes and suffixes every name (Namespaces, CRDs and APIServices keep theirs, as kustomize keeps them). The
// references to renamed objects are renamed at the end of the build, from each object's history.
function rename(objects: readonly BuiltObject[], prefix: string, suffix: string): BuiltObject[] {
  return objects.map((built) => {
    const { object } = built;
    const kind = String(object.kind);
    if (kind === "Namespace" || kind === "CustomResourceDefinition" || kind === "APIService") return built;
    const before = { name: nameOf(object), namespace: namespaceOf(object) };
    metadata(object).name = `${prefix}${before.name}${suffix}`;
    return {
      ...withId(built, before),
      prefixes: prefix ? [...built.prefixes, prefix] : built.prefixes,
      suffixes: suffix ? [...built.suffixes, suffix] : built.suffixes,
    };
  });
}

/** The pod specs of an object: a workload's template, a CronJob's job template, a Pod's own. */
export function podSpecs(object: JsonMap): JsonMap[] {
  const specs = [
    mapAt(object, ["spec", "template", "spec"], false),
    mapAt(object, ["spec", "jobTemplate", "spec", "template", "spec"], false),
    object.kind === "Pod" ? mapAt(object, ["spec"], false) : undefined,
  ];
  return specs.filter((s): s is JsonMap => s !== undefined);
}

function addLabels(
  objects: readonly BuiltObject[],
  labels: Record<string, string>,
  selectors: boolean,
  templates: boolean,
): void {
  if (Object.keys(labels).length === 0) return;
  for (const { object } of objects) {
    setLabels(object, labels, selectors, templates);
  }
}

function addAnnotations(objects: readonly BuiltObject[], annotations: Record<string, string>): void {
  if (Object.keys(annotations).length === 0) return;
  for (const { object } of objects) {
    const kind = String(object.kind);
    Object.assign(mapAt(object, ["metadata", "annotations"], true) as JsonMap, annotations);
    if (SELECTOR_KINDS.has(kind) || kind === "Job")
      Object.assign(
        mapAt(object, ["spec", "template", "metadata", "annotations"], true) as JsonMap,
        annotations,
      );
    if (kind === "CronJob") {
      Object.assign(
        mapAt(object, ["spec", "jobTemplate", "metadata", "annotations"], true) as JsonMap,
        annotations,
      );
      Object.assign(
        mapAt(
          object,
          ["spec", "jobTemplate", "spec", "template", "metadata", "annotations"],
          true,
        ) as JsonMap,
        annotations,
      );
    }
  }
}

// Sets the count on the workloads of that name; false when none has it (kustomize refuses that too).
function setReplicas(objects: readonly BuiltObject[], entry: JsonMap): boolean {
  const name = String(entry.name ?? "");
  const count = Number(entry.count);
  let found = false;
  for (const built of objects) {
    const { object } = built;
    if (!REPLICA_KINDS.has(String(object.kind))) continue;
    if (originalNameOf(built) !== name && asMap(object.metadata).name !== name) continue;
    found = true;
    if (Number.isInteger(count)) (mapAt(object, ["spec"], true) as JsonMap).replicas = count;
  }
  return found;
}

// images: name → newName, newTag or digest, in every container and init container.
function setImages(objects: readonly BuiltObject[], entry: JsonMap): void {
  const name = String(entry.name ?? "");
  for (const { object } of objects)
    for (const container of containersOf(object)) {
      if (typeof container.image !== "string") continue;
      const image = splitImage(container.image);
      if (image.name === name) container.image = retagged(image, entry);
    }
}

function containersOf(object: JsonMap): JsonMap[] {
  return podSpecs(object).flatMap((spec) =>
    [...asList(spec.containers), ...asList(spec.initContainers)].filter(isJsonMap),
  );
}

function retagged(image: { name: string; reference: string }, entry: JsonMap): string {
  const newName = typeof entry.newName === "string" ? entry.newName : image.name;
  let reference = image.reference;
  if (entry.newTag !== undefined && entry.newTag !== null) reference = `:${String(entry.newTag)}`;
  if (typeof entry.digest === "string") reference = `@${entry.digest}`;
  return `${newName}${reference}`;
}

// "registry:5000/app:1.0@sha256:…" → name "registry:5000/app", reference ":1.0@sha256:…".
function splitImage(image: string): { name: string; reference: string } {
  const at = image.indexOf("@");
  const beforeDigest = at < 0 ? image : image.slice(0, at);
  const colon = beforeDigest.lastIndexOf(":");
  const slash = beforeDigest.lastIndexOf("/");
  const split = colon > slash ? colon : at < 0 ? image.length : at;
  return { name: image.slice(0, split), reference: image.slice(split) };
}
