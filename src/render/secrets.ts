import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { isJsonMap, type JsonMap } from "../apimachinery/json.js";
import { compareStrings } from "../model/file-tree.js";

/** The annotation that replaces a Secret's values in the rendered tree. */
export const SECRET_DIGEST_ANNOTATION = "gitfleet.io/secret-digest";

/** kubectl's client-side apply record: a copy of the whole object as last applied, values included. */
export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Removes a Secret's values (`data`, `stringData`, and the copy of them kubectl keeps in its
 * last-applied annotation) from its rendered form and records a keyed digest of them instead, so the
 * status branch shows that a Secret changed without ever holding a value, or a hash anyone could
 * check a guessed value against: the digest is an HMAC-SHA256 with the fleet's secret digest key,
 * which only the operator holds. The sync reads the values from the source commit. The digest
 * covers keys and values in a fixed order, so equal Secrets have equal digests under one key.
 */
export function redactSecretValues(object: JsonMap, key: Uint8Array): JsonMap {
  const { data, stringData, ...rest } = object;
  const entries: [string, string][] = [];
  for (const [field, map] of [
    ["data", data],
    ["stringData", stringData],
  ] as const) {
    if (!isJsonMap(map)) continue;
    for (const [name, value] of Object.entries(map)) entries.push([`${field}.${name}`, String(value)]);
  }
  entries.sort(([a], [b]) => compareStrings(a, b));
  const mac = hmac(sha256, key, new TextEncoder().encode(JSON.stringify(entries)));
  const metadata = isJsonMap(rest.metadata) ? rest.metadata : {};
  const { [LAST_APPLIED_ANNOTATION]: _values, ...annotations } = isJsonMap(metadata.annotations)
    ? metadata.annotations
    : {};
  return {
    ...rest,
    metadata: {
      ...metadata,
      annotations: { ...annotations, [SECRET_DIGEST_ANNOTATION]: `hmac-sha256:${bytesToHex(mac)}` },
    },
  };
}

/** True when an Override changed a Secret's values (data or stringData) from what its template holds. */
export function secretValuesChanged(template: JsonMap, rendered: JsonMap): boolean {
  return (
    JSON.stringify(template.data ?? null) !== JSON.stringify(rendered.data ?? null) ||
    JSON.stringify(template.stringData ?? null) !== JSON.stringify(rendered.stringData ?? null)
  );
}
