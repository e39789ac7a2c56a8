import { isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { type BuiltObject, groupOf, nameOf, namespaceOf } from "./built-object.js";
import { isClusterScoped } from "./cluster-scoped.js";
import { REFERENCE_FIELDS, type ReferenceField, type Referent } from "./reference-fields.js";

// The last step of a build, as kustomize's name reference transformer takes it: every field that
// names an object renamed on the way (by a prefix, a suffix or a content hash) is set to its new
// name. An object is found by any name it had before; when several were, the one in the referrer's
// namespace, then the one with the referrer's prefixes and suffixes, is taken.

/** Renames references in place; returns the references that match more than one object. */
export function fixNameReferences(objects: readonly BuiltObject[]): string[] {
  const errors: string[] = [];
  const byKind = new Map<string, BuiltObject[]>();
  for (const built of objects) pushTo(byKind, String(built.object.kind), built);
  for (const [referent, fields] of REFERENCE_FIELDS) {
    const candidates = (byKind.get(referent.kind) ?? []).filter(
      (o) => o.previousIds.length > 0 && isReferent(o.object, referent),
    );
    if (candidates.length === 0) continue;
    const byName = namesOf(candidates);
    for (const field of fields)
      for (const referrer of byKind.get(field.referrer) ?? [])
        visit(referrer.object, field.path, (holder, key) => {
          const error = fixField(holder, key, { referrer, candidates, byName, field });
          if (error) errors.push(error);
        });
  }
  return errors;
}

// The candidates by every name they had: a reference finds its few candidates at once.
function namesOf(candidates: readonly BuiltObject[]): Map<string, BuiltObject[]> {
  const byName = new Map<string, BuiltObject[]>();
  for (const candidate of candidates)
    for (const name of new Set(candidate.previousIds.map((id) => id.name))) pushTo(byName, name, candidate);
  return byName;
}

function pushTo<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function isReferent(object: JsonMap, referent: Referent): boolean {
  return object.kind === referent.kind && (referent.group === "" || groupOf(object) === referent.group);
}

interface FieldContext {
  readonly referrer: BuiltObject;
  readonly candidates: readonly BuiltObject[];
  /** The candidates by each name they had before. */
  readonly byName: ReadonlyMap<string, readonly BuiltObject[]>;
  readonly field: ReferenceField;
}

// Calls back with each holder and key at the end of the path, walking into list elements.
function visit(
  node: Json | undefined,
  path: readonly string[],
  found: (holder: JsonMap | Json[], key: string | number) => void,
): void {
  if (Array.isArray(node)) {
    node.forEach((element, index) => {
      if (path.length === 0) found(node, index);
      else visit(element, path, found);
    });
    return;
  }
  if (!isJsonMap(node) || path.length === 0) return;
  const [key, ...rest] = path as [string, ...string[]];
  if (!(key in node)) return;
  if (rest.length === 0 && !Array.isArray(node[key])) found(node, key);
  else visit(node[key], rest, found);
}

function fixField(holder: JsonMap | Json[], key: string | number, context: FieldContext): string | undefined {
  const value = (holder as Record<string | number, Json>)[key];
  if (typeof value === "string") {
    const chosen = selectReferral(value, context.byName.get(value) ?? [], context, (c) =>
      c.every((o) => nameOf(o.object) === nameOf(c[0]?.object ?? {})),
    );
    if (typeof chosen === "string") return chosen;
    if (chosen) (holder as Record<string | number, Json>)[key] = nameOf(chosen.object);
    return undefined;
  }
  if (isJsonMap(value)) return fixMapping(value, context);
  return undefined;
}

// A reference by a mapping with `name` and `namespace` (RBAC subjects, webhook services).
function fixMapping(mapping: JsonMap, context: FieldContext): string | undefined {
  if (typeof mapping.name !== "string") return undefined;
  const namespace = typeof mapping.namespace === "string" ? mapping.namespace : undefined;
  let candidates = context.candidates;
  if (namespace !== undefined) {
    const byOriginal = candidates.filter((c) => effective(originalNamespace(c)) === effective(namespace));
    candidates =
      byOriginal.length > 0
        ? byOriginal
        : candidates.filter((c) => effective(namespaceOf(c.object)) === effective(namespace));
  }
  const sameIds = (c: readonly BuiltObject[]) =>
    c.every(
      (o) =>
        nameOf(o.object) === nameOf(c[0]?.object ?? {}) &&
        namespaceOf(o.object) === namespaceOf(c[0]?.object ?? {}),
    );
  const named = new Set(context.byName.get(mapping.name) ?? []);
  const chosen = selectReferral(
    mapping.name,
    candidates.filter((c) => named.has(c)),
    context,
    sameIds,
  );
  if (typeof chosen === "string") return chosen;
  if (!chosen) return undefined;
  const chosenNamespace = namespaceOf(chosen.object);
  if (nameOf(chosen.object) === mapping.name && chosenNamespace === "") return undefined;
  mapping.name = nameOf(chosen.object);
  if (chosenNamespace !== "") mapping.namespace = chosenNamespace;
  return undefined;
}

function originalNamespace(built: BuiltObject): string {
  return built.previousIds[0]?.namespace ?? namespaceOf(built.object);
}

function effective(namespace: string): string {
  return namespace === "" ? "default" : namespace;
}

function selectReferral(
  oldName: string,
  all: readonly BuiltObject[],
  context: FieldContext,
  identical: (candidates: readonly BuiltObject[]) => boolean,
): BuiltObject | string | undefined {
  let candidates = all.filter((c) => c.previousIds.some((id) => id.name === oldName));
  candidates = candidates.filter(roleRefFilter(context));
  candidates = candidates.filter(sameNamespaceAs(context.referrer));
  if (candidates.length === 1) return candidates[0];
  candidates = candidates.filter((c) => prefixesSuffixesEqual(c, context.referrer, true));
  if (candidates.length > 1)
    candidates = candidates.filter((c) => prefixesSuffixesEqual(c, context.referrer, false));
  if (candidates.length <= 1) return candidates[0];
  if (identical(candidates)) return candidates[0];
  const ids = candidates.map((c) => `${String(c.object.kind)} ${namespaceOf(c.object)}/${nameOf(c.object)}`);
  return `${String(context.referrer.object.kind)} ${nameOf(context.referrer.object)} refers to ${JSON.stringify(oldName)}, which could be any of ${ids.join(", ")}`;
}

// A roleRef names a Role or a ClusterRole by its kind.
function roleRefFilter(context: FieldContext): (candidate: BuiltObject) => boolean {
  if (context.field.path.join("/") !== "roleRef/name") return () => true;
  const roleRef = context.referrer.object.roleRef;
  if (!isJsonMap(roleRef) || typeof roleRef.kind !== "string") return () => true;
  return (candidate) => candidate.object.kind === roleRef.kind;
}

function sameNamespaceAs(referrer: BuiltObject): (candidate: BuiltObject) => boolean {
  if (isClusterScoped(String(referrer.object.kind))) return () => true;
  const namespace = effective(namespaceOf(referrer.object));
  return (candidate) =>
    isClusterScoped(String(candidate.object.kind)) ||
    candidate.object.kind === "ServiceAccount" ||
    effective(namespaceOf(candidate.object)) === namespace;
}

function prefixesSuffixesEqual(a: BuiltObject, b: BuiltObject, allowEmpty: boolean): boolean {
  const ends = (x: readonly string[], y: readonly string[]) =>
    (allowEmpty && (x.length === 0 || y.length === 0)) || sameEnding(x, y);
  return ends(a.prefixes, b.prefixes) && ends(a.suffixes, b.suffixes);
}

function sameEnding(a: readonly string[], b: readonly string[]): boolean {
  const [shortest, longest] = a.length <= b.length ? [a, b] : [b, a];
  if (shortest.length === 0) return longest.length === 0;
  const offset = longest.length - shortest.length;
  return shortest.every((value, index) => longest[index + offset] === value);
}
