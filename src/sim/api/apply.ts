import { asMap, type JsonMap } from "../../model/json.js";
import type { ObjectKey } from "../object-store.js";
import { applyConfiguration } from "../server-side-apply.js";
import { badRequest } from "../status-error.js";
import type { ApiContext, ApiRequest, Target } from "./api-context.js";
import { applyConflict } from "./helpers.js";
import { checkedBody, createObject, onlySubresource, requestWriter, writeObject } from "./write.js";
/**
 * Server-side apply (PATCH application/apply-patch+yaml): creates the object when it does not
 * exist; otherwise merges the configuration, refusing fields another manager owns with another
 * value unless ?force=true, and removing what this manager no longer applies.
 */
export function serverSideApply(
  api: ApiContext,
  target: Target,
  key: ObjectKey & { name: string },
  request: ApiRequest,
): JsonMap {
  const manager = request.query.get("fieldManager");
  if (!manager) throw badRequest("PATCH requests with apply content type must have a fieldManager");
  const config = checkedBody(target.resource, request.body);
  const given = asMap(config.metadata).name;
  if (given !== undefined && given !== key.name)
    throw badRequest(
      `the name of the object (${String(given)}) does not match the name on the URL (${key.name})`,
    );
  const writer = { ...requestWriter(api, target, request), manager };
  const live = api.store.get(key);
  const result = applyConfiguration(live, config, writer, request.query.get("force") === "true");
  if ("conflicts" in result) throw applyConflict(result.conflicts);
  if (!live)
    return createObject(api, target, {
      ...result.object,
      metadata: { ...asMap(result.object.metadata), name: key.name },
    });
  return writeObject(api, key, live, onlySubresource(target, live, result.object));
}
