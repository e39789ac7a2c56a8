import type { JsonMap } from "../apimachinery/json.js";
import { type ConnectionSources, resolveConnections } from "../kube/connections.js";
import { addressOf, MemberClient } from "../kube/member-client.js";
import type { FleetModel } from "../model/types.js";
import type { RenderedObject } from "../render/render-result.js";
import { mapConcurrently } from "../util/map-concurrently.js";

/**
 * The live object of each rendered object, by path, for a plan that compares with what runs. Reads
 * only (GETs). A cluster it cannot reach fails the plan, which must not present a guess as what runs.
 */
export async function readLive(
  model: FleetModel,
  objects: readonly RenderedObject[],
  sources: ConnectionSources,
): Promise<Map<string, JsonMap | undefined>> {
  const clusters = new Set(objects.map((o) => o.cluster));
  const connections = await resolveConnections(
    model.clusters.filter((c) => clusters.has(c.metadata.name)),
    sources,
  );
  const clients = new Map<string, MemberClient>();
  for (const connection of connections) {
    if (!("config" in connection) || !connection.config)
      throw new Error(
        `cannot read what runs in ${connection.cluster}: ${"error" in connection ? connection.error : "a pull-mode cluster without credentials"}`,
      );
    clients.set(connection.cluster, new MemberClient(connection.cluster, connection.config, { retries: 1 }));
  }
  // Eight reads in flight, as the sync does per cluster.
  const read = await mapConcurrently(objects, 8, (o) =>
    (clients.get(o.cluster) as MemberClient).get(addressOf(o.object)),
  );
  return new Map(objects.map((o, i) => [o.path, read[i]]));
}
