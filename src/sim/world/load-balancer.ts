import { asList, asMap } from "../../apimachinery/json.js";
import type { WorldContext } from "./world-context.js";
// A load-balancer controller (a cloud's, or MetalLB): each LoadBalancer Service gets an address.
export function assignLoadBalancers(world: WorldContext): void {
  const services = world.list("/api/v1/services").filter((s) => asMap(s.spec).type === "LoadBalancer");
  for (const [index, service] of services.entries()) {
    if (asList(asMap(asMap(service.status).loadBalancer).ingress).length > 0) continue;
    const uid = String(asMap(service.metadata).uid ?? index);
    const octet = (n: number) =>
      (Number.parseInt(uid.replace(/[^0-9a-f]/g, "").slice(n, n + 2) || "1", 16) % 254) + 1;
    world.patch(
      service,
      "/api/v1",
      "services/status",
      { status: { loadBalancer: { ingress: [{ ip: `198.51.${octet(0)}.${octet(2)}` }] } } },
      "services",
    );
  }
}
