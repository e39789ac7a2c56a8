import { asList, asMap } from "../../../src/apimachinery/json.js";
import type { MemberClient } from "../../../src/kube/member-client.js";

/**
 * What a cloud's load-balancer controller (or MetalLB) does, which the bare control planes here do
 * not run: every LoadBalancer Service without an address gets the cluster's, in its status. A
 * cluster that does not answer is skipped; the next call tries again.
 */
export async function assignLoadBalancers(
  clients: ReadonlyMap<string, MemberClient>,
  address: (cluster: string) => string,
): Promise<void> {
  for (const [cluster, client] of clients) {
    const list = await client.raw("GET", "/api/v1/services").catch(() => undefined);
    for (const item of asList(asMap(list).items)) {
      const service = asMap(item);
      const metadata = asMap(service.metadata);
      if (asMap(service.spec).type !== "LoadBalancer") continue;
      if (asList(asMap(asMap(service.status).loadBalancer).ingress).length > 0) continue;
      await client
        .raw(
          "PATCH",
          `/api/v1/namespaces/${String(metadata.namespace)}/services/${String(metadata.name)}/status`,
          { status: { loadBalancer: { ingress: [{ ip: address(cluster) }] } } },
          "application/merge-patch+json",
        )
        .catch(() => undefined);
    }
  }
}
