import type { Json } from "../apimachinery/json.js";
import { compareStrings } from "../model/file-tree.js";
import { emitYaml } from "./yaml-emitter.js";

const LEADING_KEYS = ["apiVersion", "kind", "metadata"];
const METADATA_KEYS = ["name", "namespace", "labels", "annotations"];

/**
 * Serializes a rendered object byte-stably: apiVersion, kind and metadata first (name, namespace,
 * labels, annotations first within it), every other mapping's keys sorted by code point, lists in
 * their order. The same object always gives the same bytes, so an unchanged object makes no diff.
 */
export function serializeObject(object: Json): string {
  return emitYaml(ordered(object, LEADING_KEYS));
}

function ordered(value: Json, leading: readonly string[] = []): Json {
  if (Array.isArray(value)) return value.map((item) => ordered(item));
  if (typeof value !== "object" || value === null) return value;
  const keys = Object.keys(value).sort(compareStrings);
  const first = leading.filter((key) => key in value);
  const out: { [key: string]: Json } = {};
  for (const key of [...first, ...keys.filter((k) => !first.includes(k))]) {
    out[key] = ordered(value[key] ?? null, key === "metadata" ? METADATA_KEYS : []);
  }
  return out;
}
