import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { compareStrings } from "../model/file-tree.js";
import type { JsonMap } from "../model/json.js";

/** The annotation that replaces a Secret's values in the rendered tree. */
export const SECRET_DIGEST_ANNOTATION = "gitfleet.io/secret-digest";

/**
 * Removes a Secret's values (`data`, `stringData`) from its rendered form and records a digest of
 * them instead, so the status branch shows that a Secret changed without ever holding a value. The
 * sync step reads the values from the source commit. The digest covers keys and values in a fixed
 * order, so equal Secrets have equal digests.
 */
export function redactSecretValues(object: JsonMap): JsonMap {
  const { data, stringData, ...rest } = object;
  const entries: [string, string][] = [];
  for (const [field, map] of [
    ["data", data],
    ["stringData", stringData],
  ] as const) {
    if (typeof map !== "object" || map === null || Array.isArray(map)) continue;
    for (const [key, value] of Object.entries(map)) entries.push([`${field}.${key}`, String(value)]);
  }
  entries.sort(([a], [b]) => compareStrings(a, b));
  const digest = `sha256:${bytesToHex(sha256(new TextEncoder().encode(JSON.stringify(entries))))}`;
  const metadata =
    typeof rest.metadata === "object" && rest.metadata !== null && !Array.isArray(rest.metadata)
      ? rest.metadata
      : {};
  const annotations =
    typeof metadata.annotations === "object" &&
    metadata.annotations !== null &&
    !Array.isArray(metadata.annotations)
      ? metadata.annotations
      : {};
  return {
    ...rest,
    metadata: { ...metadata, annotations: { ...annotations, [SECRET_DIGEST_ANNOTATION]: digest } },
  };
}
