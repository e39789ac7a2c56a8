import { asMap, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";

/**
 * A custom resource with its CRD's structural-schema defaults, as kube-apiserver fills them when it
 * decodes one: first a null in a field that is not `nullable` and has no `default` is dropped, then
 * each property with a `default` that is absent (or a null it may not hold) takes it, inside every
 * object that is there — a default object is itself defaulted inside. `additionalProperties` and
 * `items` defaults replace nulls. The object given is not changed. Pure.
 */
export function defaultedBySchema(schema: JsonMap, object: JsonMap): JsonMap {
  return asMap(defaulted(schema, withoutNulls(schema, object)));
}

// Below where the schema describes nothing, nothing is dropped: the value is kept whole, not walked.
function withoutNulls(schema: JsonMap | undefined, value: Json): Json {
  if (schema === undefined) return value;
  if (Array.isArray(value)) {
    const items = schema && isJsonMap(schema.items) ? schema.items : undefined;
    return value.map((item) => withoutNulls(items, item));
  }
  if (!isJsonMap(value)) return value;
  const out: JsonMap = {};
  for (const [key, item] of Object.entries(value)) {
    const below = fieldSchema(schema, key);
    if (item === null && below !== undefined && below.nullable !== true && below.default === undefined)
      continue;
    out[key] = withoutNulls(below, item as Json);
  }
  return out;
}

function defaulted(schema: JsonMap, value: Json): Json {
  if (Array.isArray(value)) {
    const items = isJsonMap(schema.items) ? schema.items : undefined;
    return items === undefined ? value : value.map((item) => defaulted(items, orDefault(items, item)));
  }
  return isJsonMap(value) ? defaultedObject(schema, value) : value;
}

// Each property's default where it is absent, then each field defaulted inside.
function defaultedObject(schema: JsonMap, value: JsonMap): JsonMap {
  const properties = asMap(schema.properties);
  const out: JsonMap = { ...value };
  for (const [key, property] of Object.entries(properties))
    if (isJsonMap(property) && property.default !== undefined && !(key in out))
      out[key] = copy(property.default as Json);
  const additional = isJsonMap(schema.additionalProperties) ? schema.additionalProperties : undefined;
  for (const key of Object.keys(out)) {
    const below = isJsonMap(properties[key]) ? asMap(properties[key]) : additional;
    if (below !== undefined) out[key] = defaulted(below, orDefault(below, out[key] as Json));
  }
  return out;
}

// A null where the schema holds no null takes its default (if it has none, it stays null).
function orDefault(schema: JsonMap, value: Json): Json {
  return value === null && schema.nullable !== true && schema.default !== undefined
    ? copy(schema.default as Json)
    : value;
}

// The schema of an object's field: its property, else what additionalProperties says.
function fieldSchema(schema: JsonMap | undefined, key: string): JsonMap | undefined {
  if (schema === undefined) return undefined;
  const own = asMap(schema.properties)[key];
  if (isJsonMap(own)) return own;
  return isJsonMap(schema.additionalProperties) ? schema.additionalProperties : undefined;
}

function copy(value: Json): Json {
  return structuredClone(value);
}
