import { describe, expect, it } from "vitest";
import { SCHEMA_FILES, schemaValidator } from "../../src/model/schemas.js";
import type { GitfleetKind } from "../../src/model/types.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// Walks a schema and yields "file#/pointer" for every property without a description of its own.
function undocumentedProperties(schema: Json, at: string): string[] {
  if (schema === null || typeof schema !== "object") return [];
  if (Array.isArray(schema)) return schema.flatMap((item, i) => undocumentedProperties(item, `${at}/${i}`));
  const missing: string[] = [];
  const properties = schema.properties;
  if (properties && typeof properties === "object" && !Array.isArray(properties)) {
    for (const [name, property] of Object.entries(properties)) {
      const described =
        property !== null &&
        typeof property === "object" &&
        !Array.isArray(property) &&
        typeof property.description === "string";
      if (!described) missing.push(`${at}/properties/${name}`);
    }
  }
  for (const [key, value] of Object.entries(schema))
    missing.push(...undocumentedProperties(value, `${at}/${key}`));
  return missing;
}

describe("schemas", () => {
  it("are one file per kind plus the shared definitions", () => {
    expect(Object.keys(SCHEMA_FILES).sort()).toEqual([
      "app.schema.json",
      "cluster.schema.json",
      "common.schema.json",
      "control-plane-class.schema.json",
      "control-plane-upgrade.schema.json",
      "cron-scale.schema.json",
      "etcd-member-replacement.schema.json",
      "etcd-restore.schema.json",
      "federated-hpa.schema.json",
      "federated-resource-quota.schema.json",
      "fleet.schema.json",
      "migration.schema.json",
      "override.schema.json",
      "placement.schema.json",
      "resource-interpreter.schema.json",
      "scale-down-request.schema.json",
      "team.schema.json",
    ]);
  });

  it.each(Object.entries(SCHEMA_FILES))("%s describes every field and uses draft 2020-12", (file, schema) => {
    const json = schema as { [key: string]: Json };
    expect(json.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(typeof json.description).toBe("string");
    expect(undocumentedProperties(json, file)).toEqual([]);
  });

  const kinds: GitfleetKind[] = [
    "Fleet",
    "Cluster",
    "App",
    "Placement",
    "Override",
    "ResourceInterpreter",
    "FederatedHPA",
    "CronScale",
    "ScaleDownRequest",
    "Migration",
    "ControlPlaneClass",
  ];
  it.each(kinds)("%s compiles in ajv strict mode and rejects an empty object", (kind) => {
    const errors = schemaValidator(kind)({});
    expect(errors.map((e) => e.keyword)).toContain("required");
  });
});
