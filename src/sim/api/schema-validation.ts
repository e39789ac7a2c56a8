import { RE2JS } from "re2js";
import { asMap, canonicalJson, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { type FieldError, goNumber } from "../field-error.js";
import { formatHolds, supportedFormat } from "./schema-formats.js";

/**
 * A custom resource's findings against its CRD's structural schema, in the order and words
 * kube-apiserver reports them (apiextensions' validator over kube-openapi's, then the list-type
 * check):
 * - at each value: its type (`x-kubernetes-int-or-string` takes an integer or a string, `nullable` a
 *   null), then a string's maxLength, minLength and pattern (the first that fails) and its format, a
 *   number's fit to its type and format, multipleOf, minimum and maximum, an array's items then
 *   minItems and maxItems, `enum`,
 *   an object's min/maxProperties, its additionalProperties' and properties' values (by name), and
 *   its required fields;
 * - then `x-kubernetes-list-type: set` and `map` (by `x-kubernetes-list-map-keys`): an item equal to
 *   (or keyed as) one before it is a duplicate.
 *
 * On an update, `old` (the stored object) ratchets, as CRDValidationRatcheting does: a value equal to
 * the one at the same place in the stored object is not checked, nor anything inside it — array items
 * are found again by their keys in a list-type map, and not at all in other lists. x-kubernetes-
 * validations (CEL) and allOf/anyOf/oneOf/not are not checked. Pure.
 */
export function schemaErrors(schema: JsonMap, object: JsonMap, old?: JsonMap): FieldError[] {
  const errors: FieldError[] = [];
  checkValue(schema, object, "", old === undefined ? undefined : { value: old }, errors);
  const stored = old === undefined ? undefined : listErrors(schema, old, "");
  if (stored === undefined || stored.length === 0) errors.push(...listErrors(schema, object, ""));
  return errors;
}

/** What the stored object holds at the same place, when there is a same place. */
type Correlated = { readonly value: Json } | undefined;

const IN = "body";

function checkValue(schema: JsonMap, value: Json, path: string, old: Correlated, errors: FieldError[]): void {
  if (old !== undefined && sameJson(old.value, value)) return;
  if (value === null) {
    const types = typesOf(schema);
    if (types.length > 0 && schema.nullable !== true) errors.push(typeInvalid(path, types.join(","), "null"));
    checkEnum(schema, value, path, errors);
    return;
  }
  const typeError = typeFinding(schema, kindOf(value), path);
  if (typeError) errors.push(typeError);
  if (typeof value === "string") errors.push(...stringFindings(schema, value, path));
  if (typeof value === "number") errors.push(...numberFindings(schema, value, path));
  if (Array.isArray(value)) checkArray(schema, value, path, old, errors);
  checkEnum(schema, value, path, errors);
  if (isJsonMap(value)) checkObject(schema, value, path, old, errors);
}

// Each item, then minItems and maxItems.
function checkArray(
  schema: JsonMap,
  value: readonly Json[],
  path: string,
  old: Correlated,
  errors: FieldError[],
): void {
  const items = schema.items;
  if (isJsonMap(items))
    value.forEach((item, i) => {
      checkValue(items, item, `${path}[${i}]`, itemOf(schema, old, item), errors);
    });
  const minItems = count(schema.minItems);
  if (minItems !== undefined && value.length < minItems)
    errors.push(invalid(path, value.length, `should have at least ${minItems} items`));
  const maxItems = count(schema.maxItems);
  if (maxItems !== undefined && value.length > maxItems) errors.push(tooMany(path, value.length, maxItems));
}

// min/maxProperties, then the values additionalProperties and properties describe, then required.
function checkObject(
  schema: JsonMap,
  value: JsonMap,
  path: string,
  old: Correlated,
  errors: FieldError[],
): void {
  const keys = Object.keys(value);
  errors.push(...propertyCountFindings(schema, keys.length, path));
  const properties = asMap(schema.properties);
  const stored = old !== undefined && isJsonMap(old.value) ? old.value : undefined;
  const below = (key: string): Correlated =>
    stored !== undefined && key in stored ? { value: stored[key] as Json } : undefined;
  const additional = schema.additionalProperties;
  if (isJsonMap(additional))
    for (const key of keys.filter((k) => !(k in properties)).sort())
      checkValue(additional, value[key] as Json, joined(path, key), below(key), errors);
  for (const key of keys.filter((k) => k in properties).sort())
    checkValue(asMap(properties[key]), value[key] as Json, joined(path, key), below(key), errors);
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  for (const key of required)
    if (!(key in value)) errors.push({ type: "FieldValueRequired", field: joined(path, key), detail: "" });
}

function propertyCountFindings(schema: JsonMap, size: number, path: string): FieldError[] {
  const found: FieldError[] = [];
  const minProperties = count(schema.minProperties);
  if (minProperties !== undefined && size < minProperties)
    found.push(invalid(path, size, `should have at least ${minProperties} properties`));
  const maxProperties = count(schema.maxProperties);
  if (maxProperties !== undefined && size > maxProperties) found.push(tooMany(path, size, maxProperties));
  return found;
}

// The type validator: the schema's type (or its format, for a value that is neither a string nor an array).
function typeFinding(schema: JsonMap, kind: string, path: string): FieldError | undefined {
  const types = typesOf(schema);
  const format = numericFormat(schema);
  const matches = types.includes(kind) || (kind === "integer" && types.includes("number"));
  const valueFormat = kind === "integer" ? "int64" : kind === "number" ? "float64" : "";
  if (kind !== "string" && kind !== "array" && format !== "" && !(matches || valueFormat === format))
    return typeInvalid(path, format, valueFormat);
  if (
    !(types.includes("number") || types.includes("integer")) &&
    format !== "" &&
    (kind === "string" || kind === "array")
  )
    return undefined;
  return types.length > 0 && !matches ? typeInvalid(path, types.join(","), kind) : undefined;
}

// maxLength, minLength, pattern: the first that fails (lengths count characters, as runes); then
// the format.
function stringFindings(schema: JsonMap, value: string, path: string): FieldError[] {
  const found: FieldError[] = [];
  const length = [...value].length;
  const maxLength = count(schema.maxLength);
  const minLength = count(schema.minLength);
  const pattern = typeof schema.pattern === "string" ? compiled(schema.pattern) : undefined;
  if (maxLength !== undefined && length > maxLength)
    found.push({
      type: "FieldValueTooLong",
      field: path,
      detail: `may not be more than ${maxLength} ${maxLength === 1 ? "byte" : "bytes"}`,
    });
  else if (minLength !== undefined && length < minLength)
    found.push(invalid(path, value, `should be at least ${minLength} chars long`));
  else if (pattern !== undefined && !pattern.matcher(value).find())
    found.push(invalid(path, value, `should match '${String(schema.pattern)}'`));
  const format = supportedFormat(schema);
  if (format !== undefined && !formatHolds(format, value)) found.push(typeInvalid(path, format, value));
  return found;
}

/**
 * A number's findings in the API server's order: whether it fits its type and format ("Checked",
 * reported at no field), then multipleOf, minimum and maximum, each after the same check of its bound.
 * A whole number meets multipleOf as an integer does: against the factor's integer part, so a factor
 * below 1 is refused as not positive (as kube-openapi does).
 */
function numberFindings(schema: JsonMap, value: number, path: string): FieldError[] {
  const range = numericRange(schema);
  const checked = rangeFinding(value, range, "Checked", path);
  return [
    ...(checked ? [checked] : []),
    ...multipleOfFindings(schema, value, range, path),
    ...boundFindings(schema, "minimum", value, range, path),
    ...boundFindings(schema, "maximum", value, range, path),
  ];
}

type NumericRange = { readonly type: string; readonly format: string };

function multipleOfFindings(schema: JsonMap, value: number, range: NumericRange, path: string): FieldError[] {
  if (typeof schema.multipleOf !== "number") return [];
  const factor = schema.multipleOf;
  const fits = rangeFinding(factor, range, "MultipleOf", path);
  const whole = fits === undefined && Number.isInteger(value);
  const multiple = multipleFinding(value, whole ? Math.trunc(factor) : factor, path, whole);
  return [...(fits ? [fits] : []), ...(multiple ? [multiple] : [])];
}

function boundFindings(
  schema: JsonMap,
  side: "minimum" | "maximum",
  value: number,
  range: NumericRange,
  path: string,
): FieldError[] {
  const at = schema[side];
  if (typeof at !== "number") return [];
  const fits = rangeFinding(at, range, side === "minimum" ? "Minimum boundary" : "Maximum boundary", path);
  const exclusive = schema[side === "minimum" ? "exclusiveMinimum" : "exclusiveMaximum"] === true;
  const words = `${exclusive ? "" : "or equal to "}${goNumber(at)}`;
  const beyond =
    side === "minimum" ? (exclusive ? value <= at : value < at) : exclusive ? value >= at : value > at;
  return [
    ...(fits ? [fits] : []),
    ...(beyond
      ? [invalid(path, value, `should be ${side === "minimum" ? "greater" : "less"} than ${words}`)]
      : []),
  ];
}

/** The type and format a number is checked against: only a schema of exactly one numeric type has one. */
function numericRange(schema: JsonMap): NumericRange {
  const format = typeof schema.format === "string" ? schema.format : "";
  if (schema.type === "integer")
    return { type: "integer", format: ["int32", "int64"].includes(format) ? format : "" };
  if (schema.type === "number")
    return { type: "number", format: ["float", "double"].includes(format) ? format : "" };
  return { type: "", format: "" };
}

const INT32 = 2 ** 31;
const FLOAT32_MAX = 3.4028234663852886e38;

// A number that its type and format cannot hold: the error, at no field, that names what it is.
function rangeFinding(
  value: number,
  range: NumericRange,
  what: string,
  path: string,
): FieldError | undefined {
  const fits =
    range.type === "integer"
      ? Number.isInteger(value) && (range.format !== "int32" || (value >= -INT32 && value < INT32))
      : range.format !== "float" || Math.abs(value) <= FLOAT32_MAX;
  if (fits) return undefined;
  const type = range.format ? `${range.type} with format ${range.format}` : `${range.type} (default format)`;
  return {
    type: "FieldValueInvalid",
    field: "<nil>",
    value: "",
    detail: `${what} value must be of type ${type} in ${path}`,
  };
}

function multipleFinding(
  value: number,
  factor: number,
  path: string,
  whole: boolean,
): FieldError | undefined {
  if (factor <= 0)
    return {
      type: "FieldValueInvalid",
      field: path,
      value: factor,
      detail: `factor MultipleOf declared for ${path} must be positive: ${goNumber(factor)}`,
    };
  const multiple = whole
    ? value % factor === 0
    : isJsonInteger(factor < 1 ? (1 / factor) * value : value / factor);
  return multiple ? undefined : invalid(path, value, `should be a multiple of ${goNumber(factor)}`);
}

// As go-openapi decides that a float is a whole number: exactly, or within a relative 1e-9.
function isJsonInteger(f: number): boolean {
  if (!Number.isFinite(f)) return false;
  const rounded = Math.round(f);
  if (f === rounded) return true;
  if (rounded === 0) return false;
  return Math.abs(f - rounded) < 1e-9 * Math.abs(rounded);
}

function checkEnum(schema: JsonMap, value: Json, path: string, errors: FieldError[]): void {
  if (!Array.isArray(schema.enum) || schema.enum.length === 0) return;
  // A null is never one of the values (the API server's check cannot compare it).
  if (value !== null && schema.enum.some((allowed) => allowed !== null && sameJson(allowed as Json, value)))
    return;
  errors.push({
    type: "FieldValueNotSupported",
    field: path,
    value,
    detail: `supported values: ${schema.enum
      .map((allowed) =>
        typeof allowed === "string"
          ? JSON.stringify(allowed)
          : JSON.stringify(canonicalJson(allowed as Json)),
      )
      .join(", ")}`,
  });
}

// x-kubernetes-list-type set and map: each value (or key) seen before is a duplicate, once per value.
function listErrors(schema: JsonMap, value: Json, path: string): FieldError[] {
  if (Array.isArray(value)) return listArrayErrors(schema, value, path);
  if (!isJsonMap(value)) return [];
  const properties = asMap(schema.properties);
  const additional = schema.additionalProperties;
  return Object.keys(value)
    .sort()
    .flatMap((key) => [
      ...(isJsonMap(additional) ? listErrors(additional, value[key] as Json, `${path}[${key}]`) : []),
      ...(isJsonMap(properties[key])
        ? listErrors(asMap(properties[key]), value[key] as Json, joined(path, key))
        : []),
    ]);
}

function listArrayErrors(schema: JsonMap, value: readonly Json[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const listType = schema["x-kubernetes-list-type"];
  if (listType === "set") errors.push(...duplicates(value, path, (item) => entryKey(schema, item)));
  if (listType === "map") {
    const notObject = value.findIndex((item) => item !== null && !isJsonMap(item));
    if (notObject >= 0)
      errors.push(
        invalid(
          `${path}[${notObject}]`,
          value[notObject] as Json,
          "must be an object for an array of list-type map",
          false,
        ),
      );
    else errors.push(...duplicates(value, path, (item) => entryKey(schema, item)));
  }
  const items = schema.items;
  if (isJsonMap(items)) errors.push(...value.flatMap((item, i) => listErrors(items, item, `${path}[${i}]`)));
  return errors;
}

function duplicates(items: readonly Json[], path: string, keyOf: (item: Json) => Json): FieldError[] {
  if (items.length <= 1) return [];
  const seen = new Map<string, number>();
  const found: FieldError[] = [];
  items.forEach((item, i) => {
    const key = keyOf(item);
    const identity = canonicalJson(key);
    const times = seen.get(identity) ?? 0;
    seen.set(identity, times + 1);
    if (times === 1)
      found.push({ type: "FieldValueDuplicate", field: `${path}[${i}]`, value: key, detail: "" });
  });
  return found;
}

/**
 * What tells an entry of a list-type set or map from the others: a set's entry itself, a map's key
 * fields (`x-kubernetes-list-map-keys`, those it has, in that order).
 */
export function entryKey(schema: JsonMap, item: Json): Json {
  return schema["x-kubernetes-list-type"] === "set" ? item : mapKey(schema, item);
}

// A list-type map item's key: its key fields (one field: that field alone), as the duplicate names it.
function mapKey(schema: JsonMap, item: Json): Json {
  const fields = Array.isArray(schema["x-kubernetes-list-map-keys"])
    ? schema["x-kubernetes-list-map-keys"].map(String)
    : [];
  const object = isJsonMap(item) ? item : {};
  return Object.fromEntries(fields.filter((f) => f in object).map((f) => [f, object[f] as Json]));
}

// The stored item an array item is compared with: by its keys in a list-type map, else none.
function itemOf(schema: JsonMap, old: Correlated, item: Json): Correlated {
  if (old === undefined || !Array.isArray(old.value) || schema["x-kubernetes-list-type"] !== "map")
    return undefined;
  const key = canonicalJson(mapKey(schema, item));
  const found = old.value.find((o) => canonicalJson(mapKey(schema, o)) === key);
  return found === undefined ? undefined : { value: found };
}

function typesOf(schema: JsonMap): string[] {
  if (schema["x-kubernetes-int-or-string"] === true) return ["integer", "string"];
  return typeof schema.type === "string" && schema.type !== "" ? [schema.type] : [];
}

// The format the type validator weighs for a value that is no string: int32/int64 on an integer,
// float/double on a number (any other is dropped from the schema the API server validates with).
function numericFormat(schema: JsonMap): string {
  const format = typeof schema.format === "string" ? schema.format : "";
  if (schema.type === "integer") return format === "int32" || format === "int64" ? format : "";
  if (schema.type === "number") return format === "float" || format === "double" ? format : "";
  return supportedFormat(schema) ?? "";
}

// A field's path below an object's (the root's path is empty).
function joined(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function kindOf(value: Json): string {
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return Array.isArray(value) ? "array" : "object";
}

function typeInvalid(path: string, type: string, found: string): FieldError {
  return {
    type: "FieldValueTypeInvalid",
    field: path,
    value: found,
    detail: `${path} in ${IN} must be of type ${type}: ${JSON.stringify(found)}`,
  };
}

// field.Invalid with kube-openapi's message, which names the path and "in body" first.
function invalid(path: string, value: Json, said: string, named = true): FieldError {
  return { type: "FieldValueInvalid", field: path, value, detail: named ? `${path} in ${IN} ${said}` : said };
}

function tooMany(path: string, actual: number, max: number): FieldError {
  return {
    type: "FieldValueTooMany",
    field: path,
    value: actual,
    detail: `must have at most ${max} ${max === 1 ? "item" : "items"}`,
  };
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

const patterns = new Map<string, RE2JS | null>();
/**
 * A pattern as Go's regexp takes it (RE2 syntax, matched anywhere in the string, in time linear in
 * its length whatever the pattern: a CRD's pattern cannot make a request run long). Kept, at most
 * 256; one that does not compile is not checked (a real server refuses the CRD instead).
 */
function compiled(pattern: string): RE2JS | undefined {
  if (!patterns.has(pattern)) {
    if (patterns.size >= 256) patterns.clear();
    let regex: RE2JS | null = null;
    try {
      regex = RE2JS.compile(pattern);
    } catch {
      regex = null;
    }
    patterns.set(pattern, regex);
  }
  return patterns.get(pattern) ?? undefined;
}

function sameJson(a: Json, b: Json): boolean {
  return a === b || canonicalJson(a) === canonicalJson(b);
}
