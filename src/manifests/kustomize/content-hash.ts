import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";

// The content hash kustomize appends to a generated ConfigMap's or Secret's name, computed exactly
// as kustomize computes it, so a name gitfleet builds is the name kustomize builds: the SHA-256 of a
// JSON encoding (Go's: keys sorted by bytes, <, > and & escaped) of the kind, type and data, its
// first ten hex digits with 0, 1, 3, a and e swapped for letters so the suffix is never all digits.
// The name is encoded empty: kustomize v5 looks it up by a path ("metadata/name") that never
// resolves, so two generated objects with the same data share a suffix — kept, to stay equal.

/** The 10-character suffix for a ConfigMap or a Secret. */
export function contentHash(object: JsonMap): string {
  const field = (key: string): Json => (object[key] === undefined ? "" : (object[key] as Json));
  const encoded: JsonMap =
    object.kind === "Secret"
      ? { kind: "Secret", type: field("type"), name: "", data: field("data") }
      : { kind: "ConfigMap", name: "", data: field("data") };
  if (object.kind === "Secret" && isJsonMap(object.stringData)) encoded.stringData = object.stringData;
  if (object.kind !== "Secret" && isJsonMap(object.binaryData)) encoded.binaryData = object.binaryData;
  const hex = bytesToHex(sha256(new TextEncoder().encode(goJson(encoded))));
  return [...hex.slice(0, 10)].map((c) => SWAPS[c] ?? c).join("");
}

const SWAPS: Readonly<Record<string, string>> = { "0": "g", "1": "h", "3": "k", a: "m", e: "t" };

/** Go's encoding/json output for a JSON value (maps sorted by key bytes, HTML characters escaped). */
export function goJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`;
  if (isJsonMap(value)) {
    const keys = Object.keys(value).sort(byUtf8);
    return `{${keys.map((key) => `${goString(key)}:${goJson(value[key] as Json)}`).join(",")}}`;
  }
  if (typeof value === "string") return goString(value);
  return JSON.stringify(value);
}

function goString(text: string): string {
  return JSON.stringify(text).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

// Go compares strings by their UTF-8 bytes; JavaScript by UTF-16 units. They differ only past U+FFFF,
// where comparing code points gives the byte order.
function byUtf8(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const difference = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return x.length - y.length;
}
