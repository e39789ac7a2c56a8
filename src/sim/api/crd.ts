import { asMap, type JsonMap } from "../../apimachinery/json.js";
import { invalid } from "../status-error.js";
import type { ApiContext } from "./api-context.js";
import { customResource, timestamp } from "./helpers.js";
// A CRD becomes served at once and reports Established, as a real server does within a second.
export function establish(api: ApiContext, crd: JsonMap): JsonMap {
  const spec = asMap(crd.spec);
  const names = asMap(spec.names);
  const group = String(spec.group ?? "");
  const kind = String(names.kind ?? "");
  const plural = String(names.plural ?? "");
  const versions = (Array.isArray(spec.versions) ? spec.versions : [])
    .map((v) => asMap(v))
    .filter((v) => v.served !== false);
  if (!group || !kind || !plural || versions.length === 0)
    throw invalid(
      "CustomResourceDefinition",
      String(asMap(crd.metadata).name),
      "spec: group, names.kind, names.plural and a served version are required",
    );
  serve(api, crd);
  const condition = (type: string) => ({
    type,
    status: "True",
    lastTransitionTime: timestamp(api.now()),
    reason: type === "Established" ? "InitialNamesAccepted" : "NoConflicts",
    message: type === "Established" ? "the initial names have been accepted" : "no conflicts found",
  });
  return {
    ...crd,
    status: {
      conditions: [condition("NamesAccepted"), condition("Established")],
      acceptedNames: names,
      storedVersions: [String(versions[0]?.name)],
    },
  };
}

/** A changed CRD: its resource is served as it says now (its schema, subresources, versions). */
export function reestablish(api: ApiContext, before: JsonMap, after: JsonMap): void {
  forget(api, before);
  serve(api, after);
}

// Each served version of the CRD's resource, added to what the member serves.
function serve(api: ApiContext, crd: JsonMap): void {
  const spec = asMap(crd.spec);
  const versions = (Array.isArray(spec.versions) ? spec.versions : [])
    .map((v) => asMap(v))
    .filter((v) => v.served !== false);
  for (const version of versions) api.custom.push(customResource(spec, version));
}

/** A deleted CRD: its resource is served no more. */
export function forget(api: ApiContext, crd: JsonMap): void {
  const spec = asMap(crd.spec);
  const plural = String(asMap(spec.names).plural);
  for (let i = api.custom.length - 1; i >= 0; i--)
    if (api.custom[i]?.group === spec.group && api.custom[i]?.name === plural) api.custom.splice(i, 1);
}
