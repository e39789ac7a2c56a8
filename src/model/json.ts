/** A JSON value: what YAML documents, Kubernetes objects and patches are made of here. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object. */
export type JsonMap = { [key: string]: Json };

/** True for a JSON object (not a list, not null). */
export function isJsonMap(value: unknown): value is JsonMap {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value when it is a JSON object, else an empty one: for reading user input of any shape. */
export function asMap(value: unknown): JsonMap {
  return isJsonMap(value) ? value : {};
}

/** The value when it is a list, else an empty one. */
export function asList(value: unknown): Json[] {
  return Array.isArray(value) ? value : [];
}

/** The value at a path of keys and list indexes, or undefined where the path leaves the data. */
export function valueAt(root: unknown, path: readonly (string | number)[]): Json | undefined {
  let node: unknown = root;
  for (const segment of path) {
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isJsonMap(node)) node = node[String(segment)];
    else return undefined;
  }
  // Callers pass parsed YAML or JSON, so whatever is found is JSON.
  return node as Json | undefined;
}

/** A copy of root with the value at path set, creating maps on the way. */
export function withValueAt(root: JsonMap, path: readonly string[], value: Json): JsonMap {
  const [head, ...rest] = path;
  if (head === undefined) return root;
  return { ...root, [head]: rest.length === 0 ? value : withValueAt(asMap(root[head]), rest, value) };
}

/** A copy of root without the value at path (root itself when there is none). */
export function withoutValueAt(root: JsonMap, path: readonly string[]): JsonMap {
  const [head, ...rest] = path;
  if (head === undefined || !(head in root)) return root;
  const { [head]: value, ...others } = root;
  if (rest.length === 0) return others;
  return isJsonMap(value) ? { ...others, [head]: withoutValueAt(value, rest) } : root;
}
