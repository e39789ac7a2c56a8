import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../json.js";
import {
  builtInSchema,
  DEFAULT_KUBERNETES_MINOR,
  isBuiltInGroup,
  releaseOf,
} from "../openapi/kubernetes-schemas.js";
import { type OpenApiSchema, type Violation, validateAgainst } from "../openapi/validate-object.js";
import type { Resource } from "../types.js";
import type { RuleContext } from "./rule.js";

const NAMED = /^[A-Z][A-Za-z0-9]*$/;
const VERSION = /^v\d+(?:(?:alpha|beta)\d+)?$/;

/**
 * Every manifest against the OpenAPI schema of the Kubernetes version the fleet declares
 * (fleet.yaml spec.kubernetesVersion, default the newest supported), and every custom resource
 * against the openAPIV3Schema of its CRD in the repo: what the API server would refuse is an error
 * at the file, line and column of the field, before merge.
 */
export function checkManifestSchemas(context: RuleContext): void {
  const minor = context.model.fleet?.spec.kubernetesVersion ?? DEFAULT_KUBERNETES_MINOR;
  // A place another check already found wrong (an invalid label, a kind that is no name) is said once.
  const before = context.reporter.problems.length;
  const reported = new Set(context.reporter.problems.map(placeOf));
  const crds = crdSchemas(context.model.apps.flatMap((app) => app.resources));
  for (const resource of context.model.apps.flatMap((app) => app.resources)) {
    // A kind or version that is no name at all is another check's to report.
    if (!NAMED.test(resource.kind) || !VERSION.test(resource.apiVersion.split("/").pop() ?? "")) continue;
    const builtIn = builtInSchema(minor, resource.apiVersion, resource.kind);
    let violations: Violation[] = [];
    if (builtIn) violations = validateAgainst(resource.object as Json, builtIn.schema, builtIn.definitions);
    else if (crds.has(`${resource.apiVersion}/${resource.kind}`)) {
      const schema = crds.get(`${resource.apiVersion}/${resource.kind}`) as OpenApiSchema;
      violations = validateAgainst(withoutTypeMeta(resource.object as JsonMap), schema, () => undefined);
    } else if (isBuiltInGroup(minor, resource.apiVersion)) {
      const message = `Kubernetes ${releaseOf(minor)} serves no kind ${resource.kind} in ${resource.apiVersion}`;
      context.reporter.report({ origin: resource.origin, path: ["kind"], code: "SCHEMA_VIOLATION", message });
    }
    for (const violation of violations) report(context, resource, violation);
  }
  const fresh = context.reporter.problems.splice(before);
  context.reporter.problems.push(...fresh.filter((p) => !reported.has(placeOf(p))));
}

function placeOf(problem: { file: string; line: number; column: number }): string {
  return `${problem.file}:${problem.line}:${problem.column}`;
}

function report(context: RuleContext, resource: Resource, violation: Violation): void {
  context.reporter.report({
    origin: resource.origin,
    path: violation.path,
    code: "SCHEMA_VIOLATION",
    message: violation.message,
    ...(violation.target ? { target: violation.target } : {}),
  });
}

// A custom resource's own fields: the API server checks apiVersion, kind and metadata itself.
function withoutTypeMeta(object: JsonMap): JsonMap {
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = object;
  return rest;
}

// The openAPIV3Schema of every served version of every CRD in the repo, by "group/version/Kind".
function crdSchemas(resources: readonly Resource[]): Map<string, OpenApiSchema> {
  const schemas = new Map<string, OpenApiSchema>();
  for (const crd of resources.filter((r) => r.kind === "CustomResourceDefinition")) {
    const spec = asMap(crd.object.spec);
    const group = String(spec.group ?? "");
    const kind = String(asMap(spec.names).kind ?? "");
    for (const version of asList(spec.versions).filter(isJsonMap)) {
      const schema = asMap(version.schema).openAPIV3Schema;
      if (isJsonMap(schema))
        schemas.set(`${group}/${String(version.name)}/${kind}`, rootOf(schema as OpenApiSchema));
    }
  }
  return schemas;
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
