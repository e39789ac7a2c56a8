import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { isJsonMap, type JsonMap } from "../apimachinery/json.js";
import { compareStrings } from "../model/file-tree.js";

/** The annotation that replaces a Secret's values in the rendered tree. */
export const SECRET_DIGEST_ANNOTATION = "gitfleet.io/secret-digest";

/**
 * The annotation that names a Secret's keys with a short keyed digest of each value
 * (`data.token=<16 hex>,stringData.password=<16 hex>`): a plan says which keys a change added,
 * removed or changed, never a value.
 */
export const SECRET_KEYS_ANNOTATION = "gitfleet.io/secret-keys";

/** kubectl's client-side apply record: a copy of the whole object as last applied, values included. */
export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Removes a Secret's values (`data`, `stringData`, and the copy of them kubectl keeps in its
 * last-applied annotation) from its rendered form and records a keyed digest of them instead, so the
 * status branch shows that a Secret changed without ever holding a value, or a hash anyone could
 * check a guessed value against: the digest is an HMAC-SHA256 with the fleet's secret digest key,
 * which only the operator holds. The sync reads the values from the source commit. The digest
 * covers keys and values in a fixed order, so equal Secrets have equal digests under one key; a
 * short digest per key (SECRET_KEYS_ANNOTATION) tells which keys a change touched.
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
  const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
  const mac = hmac(sha256, key, encode(entries));
  const perKey = entries.map(
    (entry) => `${entry[0]}=${bytesToHex(hmac(sha256, key, encode(entry))).slice(0, 16)}`,
  );
  const metadata = isJsonMap(rest.metadata) ? rest.metadata : {};
  const { [LAST_APPLIED_ANNOTATION]: _values, ...annotations } = isJsonMap(metadata.annotations)
    ? metadata.annotations
    : {};
  return {
    ...rest,
    metadata: {
      ...metadata,
      annotations: {
        ...annotations,
        [SECRET_DIGEST_ANNOTATION]: `hmac-sha256:${bytesToHex(mac)}`,
        ...(perKey.length > 0 ? { [SECRET_KEYS_ANNOTATION]: perKey.join(",") } : {}),
      },
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

/** What a change did to a Secret's keys, from the per-key digests of its two renderings. */
export interface SecretKeyChanges {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

export function secretKeyChanges(before: JsonMap, after: JsonMap): SecretKeyChanges {
  const [old, next] = [keyDigests(before), keyDigests(after)];
  const sorted = (keys: Iterable<string>) => [...keys].sort(compareStrings);
  return {
    added: sorted([...next.keys()].filter((k) => !old.has(k))),
    removed: sorted([...old.keys()].filter((k) => !next.has(k))),
    changed: sorted([...next.keys()].filter((k) => old.has(k) && old.get(k) !== next.get(k))),
  };
}

function keyDigests(object: JsonMap): Map<string, string> {
  const metadata = isJsonMap(object.metadata) ? object.metadata : {};
  const annotations = isJsonMap(metadata.annotations) ? metadata.annotations : {};
  const text = annotations[SECRET_KEYS_ANNOTATION];
  if (typeof text !== "string" || text === "") return new Map();
  return new Map(
    text.split(",").map((entry) => {
      const at = entry.lastIndexOf("=");
      return [entry.slice(0, at), entry.slice(at + 1)] as [string, string];
    }),
  );
}
