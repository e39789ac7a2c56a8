import { asList, asMap } from "../apimachinery/json.js";
import { resolveControlPlanes } from "../model/controlplane/hosted-control-plane.js";
import type { FleetModel, HostedPlaneStates } from "../model/types.js";
import { type EtcdRollout, etcdOf } from "../sync/control-plane-order.js";
import type { MemberClient } from "./member-client.js";

/**
 * The etcd StatefulSets of the control planes `client`'s cluster hosts, as the host reports them
 * (one read per StatefulSet, shared etcds once), by "namespace/name". A StatefulSet that does not
 * exist, or cannot be read, is left out: nothing waits for it.
 */
export async function readEtcdRollouts(
  client: MemberClient,
  model: FleetModel,
  planes?: HostedPlaneStates,
): Promise<Map<string, EtcdRollout>> {
  const rollouts = new Map<string, EtcdRollout>();
  for (const { plane } of resolveControlPlanes(model, client.cluster, planes)) {
    const { namespace, name } = etcdOf(plane);
    const key = `${namespace}/${name}`;
    if (rollouts.has(key)) continue;
    const live = await client
      .get({ apiVersion: "apps/v1", kind: "StatefulSet", namespace, name })
      .catch(() => undefined);
    if (live) rollouts.set(key, etcdRollout(live));
  }
  return rollouts;
}

/** A StatefulSet's image and whether every replica runs the current revision, ready. Pure. */
export function etcdRollout(live: unknown): EtcdRollout {
  const object = asMap(live);
  const spec = asMap(object.spec);
  const status = asMap(object.status);
  const image = asMap(asList(asMap(asMap(spec.template).spec).containers)[0]).image;
  const replicas = typeof spec.replicas === "number" ? spec.replicas : 1;
  const generation = asMap(object.metadata).generation;
  // A count the API server leaves out is zero (a StatefulSet scaled to none reports none).
  const count = (value: unknown) => (typeof value === "number" ? value : 0);
  const settled =
    (typeof generation !== "number" || status.observedGeneration === generation) &&
    count(status.updatedReplicas) === replicas &&
    count(status.readyReplicas) === replicas &&
    (status.currentRevision === undefined || status.currentRevision === status.updateRevision);
  return { image: typeof image === "string" ? image : undefined, settled };
}
