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

/**
 * Keys that reach a JavaScript object's prototype (`obj.__proto__`, `obj.constructor.prototype`):
 * refused wherever the fleet repo names a key or a path, and never followed when walking data.
 */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** True for a key that reaches an object's prototype. */
export function isPrototypeKey(key: string): boolean {
  return PROTOTYPE_KEYS.has(key);
}

/** The paths to every key in `value` that reaches a prototype, at any depth (at most `limit`). */
export function prototypeKeyPaths(value: unknown, limit = 20): (string | number)[][] {
  const found: (string | number)[][] = [];
  const walk = (node: unknown, path: (string | number)[]): void => {
    const children: [string | number, unknown][] = Array.isArray(node)
      ? [...node.entries()]
      : isJsonMap(node)
        ? Object.entries(node)
        : [];
    for (const [key, child] of children) {
      if (found.length >= limit) return;
      if (typeof key === "string" && isPrototypeKey(key)) found.push([...path, key]);
      else walk(child, [...path, key]);
    }
  };
  walk(value, []);
  return found;
}

/**
 * A map's own value for a key, never an inherited one: `constructor` or `toString` of a map that
 * lacks them is undefined here, where `map[key]` would give Object's.
 */
export function ownValue(map: JsonMap, key: string): Json | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/**
 * Sets a map's own property: `__proto__` becomes an ordinary key (as JSON.parse and YAML make it),
 * where `map[key] = value` would replace the map's prototype.
 */
export function setOwn(map: JsonMap, key: string, value: Json): void {
  Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The value at a path of keys and list indexes, or undefined where the path leaves the data. */
export function valueAt(root: unknown, path: readonly (string | number)[]): Json | undefined {
  let node: unknown = root;
  for (const segment of path) {
    if (Array.isArray(node)) node = Object.hasOwn(node, segment) ? node[Number(segment)] : undefined;
    else if (isJsonMap(node)) node = ownValue(node, String(segment));
    else return undefined;
  }
  // Callers pass parsed YAML or JSON, so whatever is found is JSON.
  return node as Json | undefined;
}

/** A copy of root with the value at path set, creating maps on the way. */
export function withValueAt(root: JsonMap, path: readonly string[], value: Json): JsonMap {
  const [head, ...rest] = path;
  if (head === undefined) return root;
  // A computed key in an object literal defines an own property, even for "__proto__".
  const child = rest.length === 0 ? value : withValueAt(asMap(ownValue(root, head)), rest, value);
  return { ...root, [head]: child };
}

/** A copy of root without the value at path (root itself when there is none). */
export function withoutValueAt(root: JsonMap, path: readonly string[]): JsonMap {
  const [head, ...rest] = path;
  if (head === undefined || !Object.hasOwn(root, head)) return root;
  const { [head]: value, ...others } = root;
  if (rest.length === 0) return others;
  return isJsonMap(value) ? { ...others, [head]: withoutValueAt(value, rest) } : root;
}

// A piece of text written as it is (a bracket, a comma, a key), among the values still to write.
class Written {
  constructor(readonly text: string) {}
}

/**
 * A value's compact JSON with every object's keys sorted: the same text for equal values, whatever
 * their keys' order. With `nullFieldsAbsent`, an object's null field is left out (as a merge patch
 * deletes it), so `{a: null}` and `{}` write alike. Written with an explicit stack, not recursion: a
 * value as deep as a request may hold is written like any other.
 */
export function canonicalJson(value: Json, options: { readonly nullFieldsAbsent?: boolean } = {}): string {
  const out: string[] = [];
  const work: (Json | Written)[] = [value];
  while (work.length > 0) {
    const next = work.pop() as Json | Written;
    if (next instanceof Written) out.push(next.text);
    else if (Array.isArray(next)) {
      const parts: (Json | Written)[] = [new Written("[")];
      next.forEach((item, i) => {
        if (i > 0) parts.push(new Written(","));
        parts.push(item);
      });
      work.push(...[...parts, new Written("]")].reverse());
    } else if (isJsonMap(next)) {
      const keys = Object.keys(next)
        .filter((key) => !(options.nullFieldsAbsent && next[key] === null))
        .sort();
      const parts: (Json | Written)[] = [new Written("{")];
      keys.forEach((key, i) => {
        parts.push(new Written(`${i > 0 ? "," : ""}${JSON.stringify(key)}:`), next[key] as Json);
      });
      work.push(...[...parts, new Written("}")].reverse());
    } else out.push(JSON.stringify(next));
  }
  return out.join("");
}
