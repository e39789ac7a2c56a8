import { asMap, type JsonMap } from "../../apimachinery/json.js";
import type { ObjectKey } from "../object-store.js";
import { messageType } from "../protobuf/kube-protobuf.js";
import { applyConfiguration } from "../server-side-apply.js";
import { badRequest, StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, Target } from "./api-context.js";
import { applyConflict } from "./helpers.js";
import { checkedBody, createObject, onlySubresource, requestWriter, writeObject } from "./write.js";

/**
 * An applied configuration of a built-in kind with a top-level field its schema does not declare is
 * refused as the API server refuses it: it cannot be made a typed patch (a 500, as kube-apiserver
 * answers). Custom resources keep whatever their CRD's schema lets through.
 */
function refuseUndeclared(config: JsonMap, key: ObjectKey & { name: string }): void {
  const apiVersion = String(config.apiVersion ?? "");
  const kind = String(config.kind ?? "");
  const type = messageType(apiVersion, kind);
  if (!type) return;
  const undeclared = Object.keys(config).find(
    (field) => field !== "apiVersion" && field !== "kind" && !(field in type.fields),
  );
  if (undeclared === undefined) return;
  const gvk = `${apiVersion.includes("/") ? apiVersion : `/${apiVersion}`}, Kind=${kind}`;
  // Named as the configuration names it (the URL's namespace is not yet its own).
  const metadata = asMap(config.metadata);
  const where = `${typeof metadata.namespace === "string" ? metadata.namespace : ""}/${typeof metadata.name === "string" ? metadata.name : key.name}`;
  // kube-apiserver gives this Status no reason.
  throw new StatusError(
    500,
    "",
    `failed to create typed patch object (${where}; ${gvk}): .${undeclared}: field not declared in schema`,
  );
}

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
  refuseUndeclared(config, key);
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
