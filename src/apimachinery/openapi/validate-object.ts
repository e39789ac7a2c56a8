import { isJsonMap, type Json } from "../json.js";

// Validation of a Kubernetes object against an OpenAPI v3 schema — a built-in kind's, from the
// schemas gitfleet ships (schema/kubernetes/, generated from a pinned release), or a custom
// resource's openAPIV3Schema from its CRD. What the API server would refuse is found here, before
// merge: unknown fields, wrong types, values outside an enumeration, int32 overflow, negative counts,
// ports out of range, missing required fields. Pure.

/** A schema as the shipped files (and a CRD's openAPIV3Schema) describe one. */
export interface OpenApiSchema {
  readonly ref?: string;
  readonly $ref?: string;
  readonly type?: string;
  readonly format?: string;
  readonly oneOf?: readonly (string | OpenApiSchema)[];
  readonly anyOf?: readonly OpenApiSchema[];
  readonly allOf?: readonly OpenApiSchema[];
  readonly required?: readonly string[];
  readonly enum?: readonly Json[];
  readonly properties?: Readonly<Record<string, OpenApiSchema>>;
  readonly items?: OpenApiSchema;
  readonly additionalProperties?: OpenApiSchema | boolean;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly preserveUnknownFields?: boolean;
  readonly "x-kubernetes-preserve-unknown-fields"?: boolean;
  readonly "x-kubernetes-int-or-string"?: boolean;
  readonly "x-kubernetes-embedded-resource"?: boolean;
}

/** One thing the API server would refuse, at its path in the object. */
export interface Violation {
  readonly path: readonly (string | number)[];
  readonly message: string;
  /** An unknown field points at its key. */
  readonly target?: "key";
}

/** Resolves a definition's name (the shipped files' `ref`, a `$ref`'s last part). */
export type Definitions = (name: string) => OpenApiSchema | undefined;

const MAX_VIOLATIONS = 50;
const INT32 = 2 ** 31;

/** The violations of an object against a schema; at most 50, the first ones found. */
export function validateAgainst(value: Json, schema: OpenApiSchema, definitions: Definitions): Violation[] {
  const violations: Violation[] = [];
  check(value, schema, [], { definitions, violations, depth: 0 });
  return violations.slice(0, MAX_VIOLATIONS);
}

interface Walk {
  readonly definitions: Definitions;
  readonly violations: Violation[];
  readonly depth: number;
}

function resolve(schema: OpenApiSchema, walk: Walk): OpenApiSchema {
  let current = schema;
  for (let hops = 0; hops < 8; hops++) {
    const name = current.ref ?? current.$ref?.replace(/^#\/(components\/schemas|definitions)\//, "");
    const single = current.allOf?.length === 1 ? current.allOf[0] : undefined;
    if (name !== undefined) current = walk.definitions(name) ?? {};
    else if (single && Object.keys(current).length === 1) current = single;
    else return current;
  }
  return current;
}

function check(value: Json | undefined, raw: OpenApiSchema, path: (string | number)[], walk: Walk): void {
  // null is "not set" to the API server, and past the bounds nothing more is said.
  if (value === null || value === undefined || walk.violations.length >= MAX_VIOLATIONS || walk.depth > 64)
    return;
  const schema = resolve(raw, walk);
  const next = { ...walk, depth: walk.depth + 1 };
  const typeError = wrongType(value, schema);
  if (typeError) {
    walk.violations.push({ path, message: typeError });
    return;
  }
  checkScalar(value, schema, path, walk);
  if (Array.isArray(value)) checkList(value, schema, path, next);
  else if (isJsonMap(value)) checkMap(value, schema, path, next);
}

// The JSON types a schema allows; undefined when it says nothing.
function allowedTypes(schema: OpenApiSchema): readonly string[] | undefined {
  if (schema["x-kubernetes-int-or-string"] || schema.format === "int-or-string") return ["integer", "string"];
  if (schema.type) return [schema.type];
  if (schema.oneOf?.every((o) => typeof o === "string" || o.type !== undefined))
    return schema.oneOf.map((o) => (typeof o === "string" ? o : (o.type as string)));
  return undefined;
}

function typeOf(value: Json): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value === "object" ? "object" : typeof value;
}

function wrongType(value: Json, schema: OpenApiSchema): string | undefined {
  const allowed = allowedTypes(schema);
  if (!allowed) return undefined;
  const actual = typeOf(value);
  if (allowed.includes(actual) || (actual === "integer" && allowed.includes("number"))) return undefined;
  const shown = actual === "string" ? `the string ${JSON.stringify(value)}` : `${article(actual)} ${actual}`;
  const wanted = allowed.map((t) => `${article(t)} ${t}`).join(" or ");
  return `must be ${wanted}, not ${shown}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? "an" : "a";
}

function checkScalar(value: Json, schema: OpenApiSchema, path: (string | number)[], walk: Walk): void {
  const messages = [
    enumViolation(value, schema),
    ...(typeof value === "number" ? numberViolations(value, schema) : []),
    ...(typeof value === "string" ? stringViolations(value, schema) : []),
  ];
  for (const message of messages) if (message) walk.violations.push({ path, message });
}

function enumViolation(value: Json, schema: OpenApiSchema): string | undefined {
  if (!schema.enum || schema.enum.some((allowed) => allowed === value)) return undefined;
  return `must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}, not ${JSON.stringify(value)}`;
}

function numberViolations(value: number, schema: OpenApiSchema): (string | undefined)[] {
  return [
    schema.format === "int32" && (value < -INT32 || value >= INT32)
      ? `${value} does not fit in 32 bits`
      : undefined,
    schema.format === "int64" && !Number.isSafeInteger(value)
      ? `${value} is not a 64-bit integer`
      : undefined,
    schema.minimum !== undefined && value < schema.minimum
      ? `must be greater than or equal to ${schema.minimum}, not ${value}`
      : undefined,
    schema.maximum !== undefined && value > schema.maximum
      ? `must be less than or equal to ${schema.maximum}, not ${value}`
      : undefined,
  ];
}

function stringViolations(value: string, schema: OpenApiSchema): (string | undefined)[] {
  return [
    schema.format === "byte" && !/^[A-Za-z0-9+/]*={0,2}$/.test(value.replace(/\s/g, ""))
      ? "must be base64 (the value of data is encoded; stringData takes plain text)"
      : undefined,
    schema.minLength !== undefined && value.length < schema.minLength
      ? `must be at least ${schema.minLength} characters long`
      : undefined,
    schema.maxLength !== undefined && value.length > schema.maxLength
      ? `must be at most ${schema.maxLength} characters long`
      : undefined,
  ];
}

function checkList(value: Json[], schema: OpenApiSchema, path: (string | number)[], walk: Walk): void {
  if (schema.minItems !== undefined && value.length < schema.minItems)
    walk.violations.push({ path, message: `must have at least ${schema.minItems} items` });
  if (schema.maxItems !== undefined && value.length > schema.maxItems)
    walk.violations.push({ path, message: `must have at most ${schema.maxItems} items` });
  const items = schema.items;
  if (!items) return;
  for (const [index, item] of value.entries()) check(item, items, [...path, index], walk);
}

function checkMap(
  value: { [key: string]: Json },
  schema: OpenApiSchema,
  path: (string | number)[],
  walk: Walk,
): void {
  for (const field of schema.required ?? [])
    if (value[field] === undefined || value[field] === null)
      walk.violations.push({ path, message: `missing required field "${field}"` });
  for (const [key, child] of Object.entries(value)) {
    const field = fieldSchema(schema, key);
    if (field) check(child, field, [...path, key], walk);
    else if (closed(schema, key))
      walk.violations.push({ path: [...path, key], message: `unknown field "${key}"`, target: "key" });
  }
}

// The schema of a field: its own, else the schema every other field takes.
function fieldSchema(schema: OpenApiSchema, key: string): OpenApiSchema | undefined {
  if (schema.properties && Object.hasOwn(schema.properties, key)) return schema.properties[key];
  return typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
}

// Whether a field the schema does not list is refused: listed properties and nothing that keeps
// unknown fields (an embedded object keeps its own apiVersion, kind and metadata).
function closed(schema: OpenApiSchema, key: string): boolean {
  if (!schema.properties || schema.additionalProperties === true) return false;
  if (schema.preserveUnknownFields || schema["x-kubernetes-preserve-unknown-fields"] === true) return false;
  return !(schema["x-kubernetes-embedded-resource"] === true && isTypeMeta(key));
}

function isTypeMeta(key: string): boolean {
  return key === "apiVersion" || key === "kind" || key === "metadata";
}
