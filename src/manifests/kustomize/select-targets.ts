import { asMap, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { meets, parseLabelSelectorQuery, type Requirements } from "../../apimachinery/selector-query.js";
import { type BuiltObject, groupOf, nameOf, namespaceOf, versionOf } from "./built-object.js";
import { isClusterScoped } from "./cluster-scoped.js";

// A patch's `target`, as kustomize selects by it: group, version, kind, name and namespace are
// regular expressions matched whole (an object's original name and namespace count as well as its
// current ones), labelSelector and annotationSelector are selectors in the API's query syntax.

/** A compiled target, or why it cannot be compiled. */
export type TargetSelector = (built: BuiltObject) => boolean;

const FIELDS = ["group", "version", "kind", "name", "namespace"] as const;
// Patterns are untrusted: bounded, and a repeated group that itself repeats (the shape of
// catastrophic backtracking) is refused.
const MAX_PATTERN = 256;
const NESTED_REPEAT = /\([^)]*[+*}][^)]*\)\s*[+*{]/;

export function compileTarget(target: Json | undefined): TargetSelector | string {
  if (!isJsonMap(target)) return "a target must be a mapping";
  const patterns: Partial<Record<(typeof FIELDS)[number], RegExp>> = {};
  for (const field of FIELDS) {
    const value = target[field];
    if (value === undefined || value === null || value === "") continue;
    const pattern = String(value);
    if (pattern.length > MAX_PATTERN || NESTED_REPEAT.test(pattern))
      return `target ${field} ${JSON.stringify(pattern)} is too complex a pattern`;
    try {
      patterns[field] = new RegExp(`^(?:${pattern})$`, "u");
    } catch {
      return `target ${field} ${JSON.stringify(pattern)} is not a regular expression`;
    }
  }
  const labels = selector(target.labelSelector);
  const annotations = selector(target.annotationSelector);
  if (typeof labels === "string") return `target labelSelector: ${labels}`;
  if (typeof annotations === "string") return `target annotationSelector: ${annotations}`;
  return (built) => selects(built, patterns, labels, annotations);
}

function selector(text: Json | undefined): Requirements | undefined | string {
  if (text === undefined || text === null || text === "") return undefined;
  try {
    return parseLabelSelectorQuery(String(text));
  } catch (error) {
    return (error as Error).message;
  }
}

function selects(
  built: BuiltObject,
  patterns: Partial<Record<(typeof FIELDS)[number], RegExp>>,
  labels: Requirements | undefined,
  annotations: Requirements | undefined,
): boolean {
  const { object } = built;
  const original = built.previousIds[0];
  const kind = String(object.kind ?? "");
  const effective = (namespace: string) => (isClusterScoped(kind) ? "" : namespace || "default");
  const namespaces = [namespaceOf(object), original?.namespace ?? namespaceOf(object)].map(effective);
  const names = [nameOf(object), original?.name ?? nameOf(object)];
  const test = (pattern: RegExp | undefined, values: readonly string[]) =>
    pattern === undefined || values.some((value) => pattern.test(value));
  return (
    test(patterns.namespace, namespaces) &&
    test(patterns.name, names) &&
    test(patterns.group, [groupOf(object)]) &&
    test(patterns.version, [versionOf(object)]) &&
    test(patterns.kind, [kind]) &&
    (labels === undefined || meets(labels, strings(asMap(object.metadata).labels))) &&
    (annotations === undefined || meets(annotations, strings(asMap(object.metadata).annotations)))
  );
}

function strings(value: Json | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(asMap(value)).map(([k, v]) => [k, String(v)]));
}

/** Whether an object has, or once had, the id a strategic merge patch names. */
export function hasId(built: BuiltObject, patch: JsonMap): boolean {
  const { object } = built;
  if (
    object.kind !== patch.kind ||
    groupOf(object) !== groupOf(patch) ||
    versionOf(object) !== versionOf(patch)
  )
    return false;
  const name = nameOf(patch);
  const namespace = namespaceOf(patch) || "default";
  const ids = [{ name: nameOf(object), namespace: namespaceOf(object) }, ...built.previousIds];
  return ids.some((id) => id.name === name && (id.namespace || "default") === namespace);
}
