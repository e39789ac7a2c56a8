import type { JsonMap } from "../../src/apimachinery/json.js";
import { customResourceDefinition } from "./crd.js";

/**
 * A CRD whose schema uses each keyword kube-apiserver defaults or validates a custom resource by,
 * and requests that meet each one: the second tier sends them to a real API server and a simulated
 * member alike (kubectl-parity.e2e.ts), and records the real server's answers in
 * test/golden/crd-schema-answers.json, which the simulated member is held to in the first tier.
 */
export const WIDGET_NAMESPACE = "schema";
export const WIDGETS = `/apis/parity.example.com/v1/namespaces/${WIDGET_NAMESPACE}/widgets`;

export const WIDGET_SCHEMA: JsonMap = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      required: ["size"],
      properties: {
        size: { type: "integer", minimum: 1, maximum: 10 },
        ratio: { type: "number", minimum: 0, exclusiveMinimum: true, multipleOf: 0.5 },
        color: { type: "string", enum: ["red", "blue"], default: "red" },
        name: { type: "string", minLength: 3, maxLength: 8, pattern: "^[a-z]+$" },
        when: { type: "string", format: "date-time" },
        day: { type: "string", format: "date" },
        id: { type: "string", format: "uuid" },
        addr: { type: "string", format: "ipv4" },
        net: { type: "string", format: "cidr" },
        blob: { type: "string", format: "byte" },
        port: { "x-kubernetes-int-or-string": true },
        count: { type: "integer", format: "int32" },
        tags: {
          type: "array",
          minItems: 1,
          maxItems: 3,
          items: { type: "string" },
          "x-kubernetes-list-type": "set",
        },
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: {
            type: "object",
            required: ["name"],
            properties: { name: { type: "string" }, port: { type: "integer", default: 80 } },
          },
        },
        labels: {
          type: "object",
          minProperties: 1,
          maxProperties: 2,
          additionalProperties: { type: "string", maxLength: 5 },
        },
        nested: {
          type: "object",
          default: {},
          properties: { mode: { type: "string", default: "auto" }, level: { type: "integer", default: 1 } },
        },
        optional: { type: "string", nullable: true },
        flag: { type: "boolean" },
        levels: { type: "array", items: { type: "integer", maximum: 5 } },
      },
    },
    status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
  },
};

export const WIDGET_CRD = customResourceDefinition({
  group: "parity.example.com",
  kind: "Widget",
  plural: "widgets",
  singular: "widget",
  listKind: "WidgetList",
  schema: WIDGET_SCHEMA,
});

/** One request of the table: what it is named by in the record, and what is sent. */
export interface WidgetRequest {
  readonly name: string;
  readonly method: "POST" | "PUT" | "PATCH";
  readonly path: string;
  readonly body: unknown;
  readonly contentType?: string;
  /** A replacement naming the resourceVersion the object has when it is sent (a custom resource needs one). */
  readonly versioned?: boolean;
}

/** How a test sends one request to a server: the status and decoded body it answered. */
export type Send = (
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
) => Promise<{ status: number; body: JsonMap }>;

/** Sends one request of the table, a versioned replacement with the object's resourceVersion read first. */
export async function sendWidgetRequest(
  send: Send,
  request: WidgetRequest,
): Promise<{ status: number; body: JsonMap }> {
  let body = request.body;
  if (request.versioned) {
    const stored = await send("GET", request.path);
    const metadata = {
      ...(body as { metadata: JsonMap }).metadata,
      resourceVersion: (stored.body.metadata as JsonMap).resourceVersion,
    };
    body = { ...(body as JsonMap), metadata };
  }
  return send(request.method, request.path, body, request.contentType);
}

/** A Widget named `name` with `spec`. */
export const widget = (name: string, spec: JsonMap | string) => ({
  apiVersion: "parity.example.com/v1",
  kind: "Widget",
  metadata: { name },
  spec,
});

// A create of a widget whose spec is size 5 and `more`.
const create = (name: string, more: JsonMap): WidgetRequest => ({
  name,
  method: "POST",
  path: WIDGETS,
  body: widget(name, { size: 5, ...more }),
});

export const MERGE = "application/merge-patch+json";
const APPLY = "application/apply-patch+yaml";

/** Each request in turn; the valid ones make the objects the later ones change. */
export const WIDGET_REQUESTS: readonly WidgetRequest[] = [
  create("valid", {}),
  create("defaults-inside", { nested: { mode: "manual" }, ports: [{ name: "http" }] }),
  create("null-defaulted", { color: null, nested: null }),
  create("null-kept", { optional: null }),
  create("null-dropped", { flag: null, name: null }),
  create("size-string", { size: "3" }),
  create("size-float", { size: 2.5 }),
  create("size-at-minimum", { size: 1 }),
  create("size-below-minimum", { size: 0 }),
  create("size-at-maximum", { size: 10 }),
  create("size-above-maximum", { size: 11 }),
  { name: "size-missing", method: "POST", path: WIDGETS, body: widget("size-missing", { color: "blue" }) },
  { name: "spec-string", method: "POST", path: WIDGETS, body: widget("spec-string", "big") },
  create("ratio-at-exclusive-minimum", { ratio: 0 }),
  create("ratio-just-above-minimum", { ratio: 0.5 }),
  create("ratio-not-multiple", { ratio: 0.7 }),
  create("ratio-negative-not-multiple", { ratio: -0.3 }),
  create("color-unsupported", { color: "pink" }),
  create("color-number", { color: 3 }),
  create("name-at-min-length", { name: "abc" }),
  create("name-below-min-length", { name: "ab" }),
  create("name-at-max-length", { name: "abcdefgh" }),
  create("name-above-max-length", { name: "abcdefghi" }),
  create("name-pattern", { name: "ABCD" }),
  create("name-short-and-pattern", { name: "A" }),
  create("when-valid", { when: "2026-12-07T06:00:00Z" }),
  create("when-invalid", { when: "yesterday" }),
  create("when-bad-hour", { when: "2026-12-07T25:00:00Z" }),
  create("when-number", { when: 5 }),
  create("day-invalid", { day: "2026-02-30" }),
  create("id-valid", { id: "0f8fad5b-d9cb-469f-a165-70867728950e" }),
  create("id-invalid", { id: "not-a-uuid" }),
  create("addr-invalid", { addr: "1.2.3" }),
  create("addr-valid", { addr: "10.0.0.1" }),
  create("net-invalid", { net: "10.0.0.0/33" }),
  create("blob-invalid", { blob: "abc" }),
  create("port-integer", { port: 80 }),
  create("port-string", { port: "http" }),
  create("port-boolean", { port: true }),
  create("count-float", { count: 1.5 }),
  create("tags-empty", { tags: [] }),
  create("tags-at-max", { tags: ["a", "b", "c"] }),
  create("tags-above-max", { tags: ["a", "b", "c", "d"] }),
  create("tags-duplicate", { tags: ["a", "a"] }),
  create("tags-item-type", { tags: [1] }),
  create("tags-item-null", { tags: [null] }),
  create("ports-duplicate", { ports: [{ name: "a" }, { name: "a", port: 81 }] }),
  create("ports-key-missing", { ports: [{ port: 1 }] }),
  create("ports-not-object", { ports: ["a"] }),
  create("labels-empty", { labels: {} }),
  create("labels-too-many", { labels: { a: "1", b: "2", c: "3" } }),
  create("labels-value-long", { labels: { a: "toolong" } }),
  create("levels-item-above", { levels: [1, 6] }),
  create("flag-string", { flag: "yes" }),
  {
    name: "dry-run-invalid",
    method: "POST",
    path: `${WIDGETS}?dryRun=All`,
    body: widget("dry-run-invalid", { size: 0 }),
  },
  {
    name: "dry-run-valid",
    method: "POST",
    path: `${WIDGETS}?dryRun=All`,
    body: widget("dry-run-valid", { size: 2 }),
  },
  {
    name: "replace-invalid",
    method: "PUT",
    path: `${WIDGETS}/valid`,
    body: widget("valid", { size: 12 }),
  },
  {
    name: "replace-versioned-invalid",
    method: "PUT",
    path: `${WIDGETS}/valid`,
    body: widget("valid", { size: 12 }),
    versioned: true,
  },
  {
    name: "replace-versioned-unsupported",
    method: "PUT",
    path: `${WIDGETS}/defaults-inside`,
    body: widget("defaults-inside", { size: 4, color: "green" }),
    versioned: true,
  },
  {
    name: "replace-versioned-valid",
    method: "PUT",
    path: `${WIDGETS}/defaults-inside`,
    body: widget("defaults-inside", { size: 4 }),
    versioned: true,
  },
  {
    name: "merge-patch-invalid",
    method: "PATCH",
    path: `${WIDGETS}/valid`,
    body: { spec: { color: "green" } },
    contentType: MERGE,
  },
  {
    name: "merge-patch-removes-required",
    method: "PATCH",
    path: `${WIDGETS}/valid`,
    body: { spec: { size: null } },
    contentType: MERGE,
  },
  {
    name: "merge-patch-valid",
    method: "PATCH",
    path: `${WIDGETS}/valid`,
    body: { spec: { size: 6, nested: null } },
    contentType: MERGE,
  },
  {
    name: "apply-invalid",
    method: "PATCH",
    path: `${WIDGETS}/applied?fieldManager=schema`,
    body: JSON.stringify(widget("applied", { size: 3, tags: ["x", "x"] })),
    contentType: APPLY,
  },
  {
    name: "apply-valid",
    method: "PATCH",
    path: `${WIDGETS}/applied?fieldManager=schema`,
    body: JSON.stringify(widget("applied", { size: 3 })),
    contentType: APPLY,
  },
];

/** A JSON patch narrowing the CRD's schema: size at most 8 from then on (the objects stored keep theirs). */
export const NARROWER_SIZE = [
  {
    op: "replace",
    path: "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size/maximum",
    value: 8,
  },
];
export const WIDGET_CRD_PATH =
  "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.parity.example.com";
