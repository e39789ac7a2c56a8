import { readFileSync } from "node:fs";
import { DEFAULT_KUBERNETES_MINOR, kindDefinitions } from "../apimachinery/openapi/kubernetes-schemas.js";
import { type ApiResource, groupVersion, groupVersions, pathPrefix } from "./api-resources.js";

/** The Kubernetes version a simulated member reports. */
export const SIMULATED_VERSION = { major: "1", minor: "32", gitVersion: "v1.32.0-gitfleet-sim" } as const;

/** GET /version */
export function versionBody(): Record<string, unknown> {
  return {
    ...SIMULATED_VERSION,
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2026-01-01T00:00:00Z",
    goVersion: "go1.23",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

/** GET /api */
export function coreVersionsBody(serverAddress: string): Record<string, unknown> {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

/** GET /apis: every group but the core one, each with its versions. */
export function groupListBody(resources: readonly ApiResource[]): Record<string, unknown> {
  const groups = new Map<string, { groupVersion: string; version: string }[]>();
  for (const { group, version } of groupVersions(resources)) {
    if (group === "") continue;
    groups.set(group, [
      ...(groups.get(group) ?? []),
      { groupVersion: groupVersion(group, version), version },
    ]);
  }
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: [...groups].map(([name, versions]) => ({ name, versions, preferredVersion: versions[0] })),
  };
}

/** GET /apis/<group> */
export function groupBody(
  resources: readonly ApiResource[],
  group: string,
): Record<string, unknown> | undefined {
  const found = (groupListBody(resources).groups as { name: string }[]).find((g) => g.name === group);
  return found ? { kind: "APIGroup", apiVersion: "v1", ...found } : undefined;
}

/** GET /api/v1 or /apis/<group>/<version>: the resources and their subresources, as discovery lists them. */
export function resourceListBody(
  resources: readonly ApiResource[],
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const served = resources.filter((r) => r.group === group && r.version === version);
  if (served.length === 0) return undefined;
  const entries: Record<string, unknown>[] = [];
  for (const resource of served) {
    entries.push({
      name: resource.name,
      singularName: resource.singularName,
      namespaced: resource.namespaced,
      kind: resource.kind,
      verbs: resource.verbs,
      ...(resource.shortNames ? { shortNames: resource.shortNames } : {}),
      ...(resource.categories ? { categories: resource.categories } : {}),
    });
    for (const sub of resource.subresources ?? []) {
      entries.push({
        name: `${resource.name}/${sub}`,
        singularName: "",
        namespaced: resource.namespaced,
        ...(sub === "scale"
          ? { group: "autoscaling", version: "v1", kind: "Scale" }
          : { kind: resource.kind }),
        verbs: ["get", "patch", "update"],
      });
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: groupVersion(group, version),
    resources: entries,
  };
}

/**
 * GET /openapi/v3: where each group-version's document is. kubectl reads these to learn that the
 * server validates fields itself (a `fieldValidation` parameter on PATCH), and then sends
 * `fieldValidation=Strict` instead of validating against downloaded schemas.
 */
export function openApiRootBody(
  resources: readonly ApiResource[],
  hashOf: (text: string) => string,
): Record<string, unknown> {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const { group, version } of groupVersions(resources)) {
    const key = pathPrefix(group, version).slice(1);
    const doc = JSON.stringify(openApiDocumentBody(resources, group, version));
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(doc)}` };
  }
  return { paths };
}

/** GET /openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>: the operations of each resource, without schemas. */
export function openApiDocumentBody(
  resources: readonly ApiResource[],
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const served = resources.filter((r) => r.group === group && r.version === version);
  if (served.length === 0) return undefined;
  const prefix = pathPrefix(group, version);
  const paths: Record<string, unknown> = {};
  const parameter = (name: string) => ({ name, in: "query", schema: { type: "string", uniqueItems: true } });
  for (const resource of served) {
    const gvk = { group, version, kind: resource.kind };
    const operation = (action: string, extra: object[] = []) => ({
      "x-kubernetes-action": action,
      "x-kubernetes-group-version-kind": gvk,
      parameters: [parameter("dryRun"), parameter("fieldManager"), parameter("fieldValidation"), ...extra],
      responses: { "200": { description: "OK" } },
    });
    const collection = resource.namespaced
      ? `${prefix}/namespaces/{namespace}/${resource.name}`
      : `${prefix}/${resource.name}`;
    paths[collection] = { get: operation("list"), post: operation("post") };
    paths[`${collection}/{name}`] = {
      get: operation("get"),
      put: operation("put"),
      patch: operation("patch", [parameter("force")]),
      delete: operation("delete"),
    };
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.32.0" },
    paths,
    components: { schemas: componentSchemas(served) },
  };
}

// The schemas of the served built-in kinds, as kube-apiserver's OpenAPI v3 documents give them
// (references as allOf/$ref, each kind marked with its group, version and kind) — what `kubectl
// explain` reads, with the release's descriptions.
function componentSchemas(served: readonly ApiResource[]): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const resource of served) {
    const found = kindDefinitions(
      DEFAULT_KUBERNETES_MINOR,
      groupVersion(resource.group, resource.version),
      resource.kind,
    );
    if (!found) continue;
    for (const [name, definition] of found.definitions)
      schemas[name] ??= described(name, asOpenApiV3(definition));
    schemas[found.name] = {
      ...(schemas[found.name] as object),
      "x-kubernetes-group-version-kind": [
        { group: resource.group, version: resource.version, kind: resource.kind },
      ],
    };
  }
  return schemas;
}

// The release's descriptions of a definition and its fields, as kube-apiserver's documents carry them.
function described(name: string, schema: unknown): unknown {
  const texts = descriptions()[name];
  if (!texts || schema === null || typeof schema !== "object") return schema;
  const object = schema as { properties?: Record<string, object> };
  const properties = Object.fromEntries(
    Object.entries(object.properties ?? {}).map(([field, value]) => [
      field,
      texts[field] ? { ...value, description: texts[field] } : value,
    ]),
  );
  return {
    ...object,
    ...(texts[""] ? { description: texts[""] } : {}),
    ...(object.properties ? { properties } : {}),
  };
}

// schema/kubernetes/descriptions-v1.36.json (scripts/kubernetes-descriptions.mjs), read on first use.
let loaded: Readonly<Record<string, Readonly<Record<string, string>>>> | undefined;
function descriptions(): Readonly<Record<string, Readonly<Record<string, string>>>> {
  loaded ??= (
    JSON.parse(
      readFileSync(new URL("../../schema/kubernetes/descriptions-v1.36.json", import.meta.url), "utf8"),
    ) as { definitions: Record<string, Record<string, string>> }
  ).definitions;
  return loaded;
}

function asOpenApiV3(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(asOpenApiV3);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "ref") out.allOf = [{ $ref: `#/components/schemas/${String(value)}` }];
    // The shipped schemas write a choice of types as their names ("string", "number").
    else if (key === "oneOf" && Array.isArray(value))
      out.oneOf = value.map((v) => (typeof v === "string" ? { type: v } : asOpenApiV3(v)));
    else out[key] = asOpenApiV3(value);
  }
  return out;
}
