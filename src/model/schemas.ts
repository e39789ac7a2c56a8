import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import app from "../../schema/app.schema.json" with { type: "json" };
import cluster from "../../schema/cluster.schema.json" with { type: "json" };
import common from "../../schema/common.schema.json" with { type: "json" };
import cronScale from "../../schema/cron-scale.schema.json" with { type: "json" };
import federatedHpa from "../../schema/federated-hpa.schema.json" with { type: "json" };
import fleet from "../../schema/fleet.schema.json" with { type: "json" };
import migration from "../../schema/migration.schema.json" with { type: "json" };
import override from "../../schema/override.schema.json" with { type: "json" };
import placement from "../../schema/placement.schema.json" with { type: "json" };
import resourceInterpreter from "../../schema/resource-interpreter.schema.json" with { type: "json" };
import scaleDownRequest from "../../schema/scale-down-request.schema.json" with { type: "json" };
import { STRING_FORMATS } from "./formats.js";
import type { GitfleetKind } from "./types.js";

/** Every schema document in schema/, by file name: the reference documentation of the fleet repo format. */
export const SCHEMA_FILES: Readonly<Record<string, object>> = {
  "common.schema.json": common,
  "fleet.schema.json": fleet,
  "cluster.schema.json": cluster,
  "app.schema.json": app,
  "placement.schema.json": placement,
  "override.schema.json": override,
  "resource-interpreter.schema.json": resourceInterpreter,
  "federated-hpa.schema.json": federatedHpa,
  "cron-scale.schema.json": cronScale,
  "scale-down-request.schema.json": scaleDownRequest,
  "migration.schema.json": migration,
};

const KIND_SCHEMAS: Readonly<Record<GitfleetKind, object>> = {
  Fleet: fleet,
  Cluster: cluster,
  App: app,
  Placement: placement,
  Override: override,
  ResourceInterpreter: resourceInterpreter,
  FederatedHPA: federatedHpa,
  CronScale: cronScale,
  ScaleDownRequest: scaleDownRequest,
  Migration: migration,
};

/** One schema violation: where (a JSON pointer) and the raw ajv error, for wording by the caller. */
export type SchemaError = ErrorObject;

/** Validates one document against its kind's schema, returning every violation (never throws). */
export type KindValidator = (value: unknown) => readonly SchemaError[];

let validators: ReadonlyMap<GitfleetKind, ValidateFunction> | undefined;
let shared: Ajv2020 | undefined;

function sharedAjv(): Ajv2020 {
  shared ??= createAjv();
  return shared;
}

function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, verbose: true });
  for (const format of STRING_FORMATS) {
    ajv.addFormat(format.name, {
      type: "string",
      validate: (value: string) => format.explain(value) === undefined,
    });
  }
  ajv.addSchema(common);
  // placement.schema.json is referenced by fleet.schema.json (rollout defaults), so it is added first.
  ajv.addSchema(placement);
  return ajv;
}

function compileValidators(): ReadonlyMap<GitfleetKind, ValidateFunction> {
  const ajv = sharedAjv();
  const compiled = new Map<GitfleetKind, ValidateFunction>();
  for (const [kind, schema] of Object.entries(KIND_SCHEMAS) as [GitfleetKind, object][]) {
    const id = (schema as { $id: string }).$id;
    compiled.set(kind, ajv.getSchema(id) ?? ajv.compile(schema));
  }
  return compiled;
}

/** Returns the schema validator of a gitfleet kind; schemas compile once, on first use. */
export function schemaValidator(kind: GitfleetKind): KindValidator {
  validators ??= compileValidators();
  const validate = validators.get(kind);
  if (!validate) throw new Error(`no schema for kind ${kind}`);
  return (value) => (validate(value) ? [] : [...(validate.errors ?? [])]);
}

/** Compiles another schema (such as `gitfleet schedule`'s input) that may $ref the fleet schemas by $id. */
export function compileSchema(schema: object): KindValidator {
  const validate = sharedAjv().compile(schema);
  return (value) => (validate(value) ? [] : [...(validate.errors ?? [])]);
}
