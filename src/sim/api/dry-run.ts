import { asMap, isJsonMap, type JsonMap } from "../../apimachinery/json.js";
import { DryRunStore } from "../dry-run-store.js";
import type { ApiContext } from "./api-context.js";

/**
 * The API's context for one `dryRun=All` request: the member's own, but for its store — reads see
 * the member's objects, writes stay in the request — and the custom resources served, which a CRD
 * created or deleted in a dry run leaves as they are.
 */
export function dryRunContext(api: ApiContext): ApiContext {
  const store = new DryRunStore(api.store);
  const custom = [...api.custom];
  return {
    clusterName: api.clusterName,
    store,
    custom,
    options: api.options,
    load: api.load,
    logs: api.logs,
    now: () => api.now(),
    resources: () => [...api.resources().filter((r) => !api.custom.includes(r)), ...custom],
  };
}

/**
 * A dry run's answer with the resourceVersion the API server gives it: nothing was stored, so a new
 * object has none, and a changed one (or its Scale) keeps the version it has in the store — what
 * `kubectl diff` relies on to show no change where there is none. A Status or a list is left as it is.
 */
export function dryRunAnswer(body: unknown, stored: JsonMap | undefined): unknown {
  if (!isJsonMap(body) || body.kind === "Status" || Array.isArray(body.items)) return body;
  const metadata = { ...asMap(body.metadata) };
  const version = asMap(stored?.metadata).resourceVersion;
  if (typeof version === "string") metadata.resourceVersion = version;
  else delete metadata.resourceVersion;
  return { ...body, metadata };
}
