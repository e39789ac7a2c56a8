import { MemberClient } from "../../kube/member-client.js";
import type { FleetModel } from "../../model/types.js";
import type { RenderedObject } from "../../render/render-result.js";
import { memberClientConfig } from "../../sim/kubeconfig.js";
import type { SimulatedMember } from "../../sim/member-server.js";
import { withoutTracking } from "./deploy-by-hand.js";

const MCS_GROUPS = new Set(["multicluster.x-k8s.io", "about.k8s.io"]);

/**
 * The demo's members come with the Multi-Cluster Services API's CRDs, as clusters joined to a
 * cluster set do (the example's platform app carries them too and adopts them): the cordoned
 * idc-east-2, which takes nothing new, still gets the cluster set's ClusterProperties and imports.
 * Returns how many members got them.
 */
export async function installMcsCrds(
  model: FleetModel,
  rendered: readonly RenderedObject[],
  members: readonly SimulatedMember[],
): Promise<number> {
  if (!model.fleet?.spec.serviceDiscovery) return 0;
  const crds = new Map(
    rendered
      .filter(
        (o) =>
          o.identity.startsWith("apiextensions.k8s.io/CustomResourceDefinition/") &&
          MCS_GROUPS.has(String((o.object.spec as { group?: unknown } | undefined)?.group)),
      )
      .map((o) => [o.identity, o.object]),
  );
  if (crds.size === 0) return 0;
  for (const member of members) {
    const client = new MemberClient(member.name, memberClientConfig(member), { fieldManager: "kubectl" });
    for (const crd of crds.values()) await client.apply(withoutTracking(crd), false);
  }
  return members.length;
}
