import { asList, asMap } from "../../apimachinery/json.js";
import type { WorldContext } from "./world-context.js";
// A default StorageClass with immediate binding: every claim is Bound to a volume of the size it asks.
export function bindClaims(world: WorldContext): void {
  for (const claim of world.list("/api/v1/persistentvolumeclaims")) {
    if (asMap(claim.status).phase === "Bound") continue;
    const spec = asMap(claim.spec);
    world.patch(
      claim,
      "/api/v1",
      "persistentvolumeclaims/status",
      {
        status: {
          phase: "Bound",
          accessModes: asList(spec.accessModes),
          capacity: { storage: asMap(asMap(spec.resources).requests).storage ?? "1Gi" },
        },
      },
      "persistentvolumeclaims",
    );
  }
}
