import { asMap, isJsonMap, type Json, type JsonMap } from "../../src/apimachinery/json.js";

/**
 * An API server's answer without what differs by nature between two servers (ids, versions, times,
 * managedFields, what a Deployment's controller wrote) — and, in a list, the items' apiVersion and
 * kind, which a real list leaves out — with its keys in one order: two answers that mean the same
 * compare equal.
 */
export function comparableAnswer(body: JsonMap): unknown {
  const items = Array.isArray(body.items)
    ? { items: body.items.map((item) => ({ ...asMap(item), apiVersion: undefined, kind: undefined })) }
    : {};
  const ignored = [
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "managedFields",
    "time",
  ];
  const text = JSON.stringify({ ...body, ...items }, (key, value: unknown) => {
    if (ignored.includes(key) || (key === "status" && body.kind === "Deployment")) return undefined;
    return isJsonMap(value as Json)
      ? Object.fromEntries(Object.entries(value as JsonMap).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value;
  });
  return JSON.parse(text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "UID"));
}
