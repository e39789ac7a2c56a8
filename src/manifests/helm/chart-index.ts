import { parse } from "yaml";

/** One chart version as a chart repository's index.yaml lists it: where its archive is, and its digest. */
export interface ChartIndexEntry {
  /** As the index writes it: absolute, or relative to the repository's URL. */
  readonly url: string;
  /** The archive's sha256, hex, when the index gives one. */
  readonly digest?: string;
}

/**
 * The entry of `name` at `version` in a chart repository's index.yaml, as helm finds it (the first of
 * its `urls`), or why there is none. The text came from a server: it is parsed as data only, with few
 * aliases, and no error quotes it. Pure.
 */
export function chartIndexEntry(
  text: string,
  name: string,
  version: string,
): ChartIndexEntry | { readonly error: string } {
  let index: unknown;
  try {
    // Every scalar a string, as helm reads an index: a version 1.10 is not the number 1.1.
    index = parse(text, { maxAliasCount: 100, uniqueKeys: false, prettyErrors: false, schema: "failsafe" });
  } catch {
    return { error: "its index.yaml does not parse as YAML" };
  }
  const entries = isMap(index) && isMap(index.entries) ? index.entries : undefined;
  if (!entries) return { error: "its index.yaml is not a chart repository index (no entries)" };
  const versions = Object.hasOwn(entries, name) ? entries[name] : undefined;
  if (!Array.isArray(versions)) return { error: `its index lists no chart ${name}` };
  const wanted = version.replace(/^v/, "");
  const found = versions.find(
    (entry) =>
      isMap(entry) && typeof entry.version === "string" && entry.version.replace(/^v/, "") === wanted,
  );
  if (!isMap(found)) return { error: `its index lists no version ${version} of ${name}` };
  const [url] = Array.isArray(found.urls) ? found.urls : [];
  if (typeof url !== "string" || url === "" || url.length > 2048)
    return { error: `its index names no archive for ${name} ${version}` };
  const digest =
    typeof found.digest === "string" && /^[0-9a-f]{64}$/i.test(found.digest)
      ? found.digest.toLowerCase()
      : undefined;
  return { url, ...(digest ? { digest } : {}) };
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
