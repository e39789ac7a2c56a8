import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../json.js";
import { builtInSchema } from "./kubernetes-schemas.js";
import { type OpenApiSchema, type Violation, validateAgainst } from "./validate-object.js";

// The schema an object is checked against: the built-in kind's in the Kubernetes minor, else the
// openAPIV3Schema of its CRD in the fleet repo. Shared by the load-time rule (every manifest as
// written) and the render (every object an Override changed, per cluster).

/** The openAPIV3Schema of every served version of every CRD among the resources, by "group/version/Kind". */
export type CrdSchemas = ReadonlyMap<string, OpenApiSchema>;

/** An object's violations of its schema, or undefined when no schema is known for its kind. */
export function objectViolations(minor: string, crds: CrdSchemas, object: JsonMap): Violation[] | undefined {
  const apiVersion = typeof object.apiVersion === "string" ? object.apiVersion : "";
  const kind = typeof object.kind === "string" ? object.kind : "";
  const builtIn = builtInSchema(minor, apiVersion, kind);
  if (builtIn) return validateAgainst(object as Json, builtIn.schema, builtIn.definitions);
  const crd = crds.get(`${apiVersion}/${kind}`);
  if (crd) return validateAgainst(withoutTypeMeta(object), crd, () => undefined);
  return undefined;
}

// A custom resource's own fields: the API server checks apiVersion, kind and metadata itself.
function withoutTypeMeta(object: JsonMap): JsonMap {
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = object;
  return rest;
}

// The openAPIV3Schema of every served version of every CRD in the repo, by "group/version/Kind".
// Each CRD's schemas are the same objects while the CRD is (what was checked against them can be
// remembered by identity).
export function crdSchemas(
  resources: readonly { readonly kind: string; readonly object: Readonly<Record<string, unknown>> }[],
): Map<string, OpenApiSchema> {
  const schemas = new Map<string, OpenApiSchema>();
  for (const crd of resources)
    if (crd.kind === "CustomResourceDefinition")
      for (const [key, schema] of schemasOfCrd(crd.object)) schemas.set(key, schema);
  return schemas;
}

const crdEntries = new WeakMap<object, readonly (readonly [string, OpenApiSchema])[]>();
function schemasOfCrd(crd: Readonly<Record<string, unknown>>): readonly (readonly [string, OpenApiSchema])[] {
  const known = crdEntries.get(crd);
  if (known) return known;
  const spec = asMap(crd.spec);
  const group = String(spec.group ?? "");
  const kind = String(asMap(spec.names).kind ?? "");
  const entries: [string, OpenApiSchema][] = [];
  for (const version of asList(spec.versions).filter(isJsonMap)) {
    const schema = asMap(version.schema).openAPIV3Schema;
    if (isJsonMap(schema))
      entries.push([`${group}/${String(version.name)}/${kind}`, rootOf(schema as OpenApiSchema)]);
  }
  crdEntries.set(crd, entries);
  return entries;
}

// The CRD's schema for the fields under the root (apiVersion, kind and metadata are the server's).
function rootOf(schema: OpenApiSchema): OpenApiSchema {
  if (!schema.properties) return schema;
  const properties = { ...schema.properties };
  delete properties.apiVersion;
  delete properties.kind;
  delete properties.metadata;
  return { ...schema, properties };
}
