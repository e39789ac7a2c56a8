import { isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";

// What a member serves, from its discovery: per group-version the kinds it has resources for. The
// scheduler's APIEnablement filter reads it as "group/version/Kind" strings ("apps/v1/Deployment",
// "v1/ConfigMap"); the status branch records it per group-version, sorted, so it changes only when
// an API appears or goes (a CRD installed or removed, an upgrade).

/** Per group-version ("apps/v1", "v1"), the kinds served there. */
export type ServedApis = Readonly<Record<string, readonly string[]>>;

const MAX_GROUP_VERSIONS = 1000;
const MAX_KINDS = 500;
const GROUP_VERSION = /^(?:[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?v[0-9]+(?:(?:alpha|beta)[0-9]+)?$/;
const KIND = /^[A-Za-z][A-Za-z0-9]{0,62}$/;

/** The "group/version/Kind" names a member serves. */
export function servedKinds(apis: ServedApis): Set<string> {
  const kinds = new Set<string>();
  for (const [groupVersion, served] of Object.entries(apis))
    for (const kind of served) kinds.add(`${groupVersion}/${kind}`);
  return kinds;
}

/** The record status/clusters/<cluster>.yaml keeps under observed.apis: group-versions and kinds sorted. */
export function servedApisRecord(apis: ServedApis): JsonMap {
  const record: JsonMap = {};
  for (const groupVersion of Object.keys(apis).sort())
    record[groupVersion] = [...new Set(apis[groupVersion])].sort();
  return record;
}

/**
 * Reads a recorded or reported list back (untrusted): at most 1,000 group-versions of 500 kinds,
 * each name as Kubernetes spells them. Undefined when there is none.
 */
export function readServedApis(value: Json | undefined): ServedApis | undefined {
  if (!isJsonMap(value)) return undefined;
  const apis: Record<string, string[]> = {};
  for (const [groupVersion, kinds] of Object.entries(value).slice(0, MAX_GROUP_VERSIONS)) {
    if (!GROUP_VERSION.test(groupVersion) || !Array.isArray(kinds)) continue;
    apis[groupVersion] = kinds
      .slice(0, MAX_KINDS)
      .filter((k): k is string => typeof k === "string" && KIND.test(k));
  }
  return Object.keys(apis).length > 0 ? apis : undefined;
}
