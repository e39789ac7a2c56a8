import { asMap, type JsonMap } from "../../apimachinery/json.js";
import { type ApiResource, groupVersion } from "../api-resources.js";
import { badRequest, StatusError } from "../status-error.js";
import type { ApiContext, ApiResponse, Target } from "./api-context.js";
import { selection } from "./read.js";
/**
 * A watch: from a resourceVersion, the logged changes after it, then each change as it happens;
 * without one, the current objects as ADDED first. A version whose changes are no longer kept
 * gets an ERROR event with a 410 Expired Status, as a real server sends. Bookmarks when asked,
 * and the stream ends after timeoutSeconds.
 */
export function watchObjects(api: ApiContext, target: Target, query: URLSearchParams): ApiResponse {
  const selected = selection(query, target.resource.kind);
  const given = query.get("resourceVersion") ?? "";
  const from = given === "" || given === "0" ? undefined : Number(given);
  if (from !== undefined && !Number.isInteger(from)) throw badRequest(`invalid resource version "${given}"`);
  const wanted = (resource: ApiResource, object: JsonMap) =>
    resource === target.resource &&
    (target.namespace === undefined || asMap(object.metadata).namespace === target.namespace) &&
    selected(object);
  const stream = (send: (event: JsonMap) => void, end: () => void) => {
    const initial =
      from === undefined ? api.store.list(target.resource, target.namespace).filter(selected) : [];
    const subscription = api.store.watch(from ?? Number(api.store.currentVersion()), (event) => {
      if (wanted(event.resource, event.object)) send({ type: event.type, object: event.object });
    });
    if (!subscription) {
      const gone = new StatusError(
        410,
        "Expired",
        `too old resource version: ${given} (${api.store.currentVersion()})`,
      );
      send({ type: "ERROR", object: gone.body() as JsonMap });
      end();
      return () => undefined;
    }
    for (const object of initial) send({ type: "ADDED", object });
    for (const event of subscription.backlog)
      if (wanted(event.resource, event.object)) send({ type: event.type, object: event.object });
    return watchTimers(api, target, query, { send, end, stop: subscription.stop });
  };
  const { group, version, kind } = target.resource;
  return {
    status: 200,
    body: undefined,
    stream,
    streamKind: { apiVersion: groupVersion(group, version), kind },
  };
}

/** A watch's bookmarks and its timeout; returns what stops them and the watch. */
export function watchTimers(
  api: ApiContext,
  target: Target,
  query: URLSearchParams,
  watch: { send: (event: JsonMap) => void; end: () => void; stop: () => void },
): () => void {
  const { resource } = target;
  const apiVersion = groupVersion(resource.group, resource.version);
  const bookmark = () =>
    watch.send({
      type: "BOOKMARK",
      object: {
        kind: resource.kind,
        apiVersion,
        metadata: { resourceVersion: api.store.currentVersion() },
      },
    });
  const bookmarks =
    query.get("allowWatchBookmarks") === "true"
      ? setInterval(bookmark, api.options.bookmarkIntervalMs ?? 5000)
      : undefined;
  const seconds = Number(query.get("timeoutSeconds") ?? "0");
  const timeout = seconds > 0 ? setTimeout(watch.end, seconds * 1000) : undefined;
  return () => {
    watch.stop();
    if (bookmarks) clearInterval(bookmarks);
    if (timeout) clearTimeout(timeout);
  };
}
