import type { JsonMap } from "../../src/apimachinery/json.js";

/** What a test's CustomResourceDefinition says: one served, stored version v1, namespaced unless said. */
export interface CrdShape {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular?: string;
  readonly listKind?: string;
  readonly scope?: "Namespaced" | "Cluster";
  /** The version's openAPIV3Schema; none: the CRD gives no schema (a simulated member keeps every field). */
  readonly schema?: JsonMap;
  /** More of the version's fields (additionalPrinterColumns, subresources). */
  readonly version?: JsonMap;
}

/** A CustomResourceDefinition of `shape`, as a client creates it. */
export function customResourceDefinition(shape: CrdShape): JsonMap {
  const names = {
    kind: shape.kind,
    plural: shape.plural,
    ...(shape.singular ? { singular: shape.singular } : {}),
    ...(shape.listKind ? { listKind: shape.listKind } : {}),
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${shape.plural}.${shape.group}` },
    spec: {
      group: shape.group,
      scope: shape.scope ?? "Namespaced",
      names,
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          ...(shape.schema ? { schema: { openAPIV3Schema: shape.schema } } : {}),
          ...shape.version,
        },
      ],
    },
  };
}

/** A schema that keeps its objects' spec whole: one that names no field prunes every one on a real server. */
export const OPEN_SPEC: JsonMap = {
  type: "object",
  properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
};

/**
 * A schema declaring a spec of a scalar (size), a list of objects declaring one field (tags[].k), a
 * map of strings (labels) and a free-form object (free), with `more` fields beside them: each way a
 * structural schema keeps or prunes a field.
 */
export function declaredSpec(more: JsonMap = {}): JsonMap {
  return {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: {
          size: { type: "integer" },
          tags: { type: "array", items: { type: "object", properties: { k: { type: "string" } } } },
          labels: { type: "object", additionalProperties: { type: "string" } },
          free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          ...more,
        },
      },
    },
  };
}
