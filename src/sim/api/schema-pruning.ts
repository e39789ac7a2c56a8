import { asMap, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { undeclaredFields } from "../protobuf/kube-protobuf.js";

/**
 * A custom resource's fields as kube-apiserver prunes them by its CRD's structural schema: a field
 * no `properties` names is dropped — unless `additionalProperties` or
 * `x-kubernetes-preserve-unknown-fields` keeps it — and its path reported (`spec.color`,
 * `spec.tags[0].v`). `apiVersion` and `kind` stay; `metadata` is an ObjectMeta, its undeclared
 * fields reported first, the rest in key order, as the API server reports them.
 */
export function prunedBySchema(
  schema: JsonMap,
  object: JsonMap,
  /** Paths in the object's own order (as a server-side apply names them), not the keys' order. */
  options: { readonly inOrder?: boolean } = {},
): { readonly paths: readonly string[]; readonly declared: JsonMap } {
  const paths: string[] = [];
  const { apiVersion, kind, metadata, ...rest } = object;
  const meta = isJsonMap(metadata) ? undeclaredFields("v1", "ObjectMeta", metadata) : undefined;
  for (const path of meta?.paths ?? []) paths.push(`metadata.${path}`);
  const order = options.inOrder ? (keys: string[]) => keys : (keys: string[]) => keys.sort();
  const pruned = asMap(prunedValue(schema, rest, "", paths, order));
  return {
    paths,
    declared: {
      ...(apiVersion === undefined ? {} : { apiVersion }),
      ...(kind === undefined ? {} : { kind }),
      ...(metadata === undefined ? {} : { metadata: meta?.declared ?? metadata }),
      ...pruned,
    },
  };
}

function prunedValue(
  schema: JsonMap,
  value: Json,
  path: string,
  paths: string[],
  order: (keys: string[]) => string[],
): Json {
  if (Array.isArray(value))
    return isJsonMap(schema.items)
      ? value.map((item, i) => prunedValue(asMap(schema.items), item, `${path}[${i}]`, paths, order))
      : value;
  if (!isJsonMap(value)) return value;
  const out: JsonMap = {};
  for (const key of order(Object.keys(value))) {
    const at = path === "" ? key : `${path}.${key}`;
    const item = value[key] as Json;
    const below = schemaOf(schema, key);
    if (isJsonMap(below)) out[key] = prunedValue(below, item, at, paths, order);
    else if (below) out[key] = item;
    else paths.push(at);
  }
  return out;
}

// What a field of an object takes: its own schema, or true to keep it as it is, or false to prune it.
function schemaOf(schema: JsonMap, key: string): JsonMap | boolean {
  const own = asMap(schema.properties)[key];
  if (isJsonMap(own)) return own;
  const additional = schema.additionalProperties;
  if (isJsonMap(additional)) return additional;
  if (additional === true || schema["x-kubernetes-preserve-unknown-fields"] === true) return true;
  return (
    schema["x-kubernetes-embedded-resource"] === true && ["apiVersion", "kind", "metadata"].includes(key)
  );
}
