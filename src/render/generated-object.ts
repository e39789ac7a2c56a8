import { asMap, type JsonMap } from "../apimachinery/json.js";
import { identityOf } from "../model/identity.js";
import { renderedPath } from "../model/rendered-path.js";
import type { RenderedObject } from "./render-result.js";
import { serializeObject } from "./serialize.js";
import { withTracking } from "./tracking.js";

/**
 * An object gitfleet makes rather than one the fleet repo writes (member HPAs, ServiceImports,
 * EndpointSlices, the cluster set's objects), tracked for its app and Placements and serialized for
 * one cluster; its path and identity come from its apiVersion, kind and metadata. Pure.
 */
export function generatedObject(
  app: string,
  placements: readonly string[],
  cluster: string,
  body: JsonMap,
): RenderedObject {
  const object = withTracking(body, app, placements);
  const metadata = asMap(object.metadata);
  const apiVersion = String(object.apiVersion);
  const group = apiVersion.includes("/") ? (apiVersion.split("/")[0] ?? "") : "";
  const kind = String(object.kind);
  const namespace = typeof metadata.namespace === "string" ? metadata.namespace : undefined;
  const name = String(metadata.name);
  return {
    cluster,
    app,
    path: renderedPath({ cluster, group, kind, namespace, name }),
    identity: identityOf(group, kind, namespace, name),
    object,
    text: serializeObject(object),
  };
}
