import { asMap, type JsonMap } from "../../apimachinery/json.js";
import type { ApiResource } from "../api-resources.js";
import { invalidObject } from "../field-error.js";
import { defaultedBySchema } from "./schema-defaults.js";
import { schemaErrors } from "./schema-validation.js";

/**
 * A custom resource as its CRD's structural schema admits a write of it: defaulted
 * (schema-defaults.ts), then validated (schema-validation.ts) — on an update against the stored
 * object, which ratchets what it already held. 422 Invalid, naming every finding, when it fails;
 * an object of a resource without a schema as it is.
 */
export function admittedBySchema(resource: ApiResource, object: JsonMap, stored?: JsonMap): JsonMap {
  if (resource.schema === undefined) return object;
  const defaulted = defaultedBySchema(resource.schema, object);
  const errors = schemaErrors(resource.schema, defaulted, stored);
  if (errors.length > 0) {
    const name = asMap(defaulted.metadata).name;
    throw invalidObject(resource, typeof name === "string" ? name : "", errors);
  }
  return defaulted;
}
