import type { FleetModel } from "../../model/types.js";
import type { SimulatedMember } from "../../sim/member-server.js";

// The demo's orders queue: each member's metrics adapter serves the depth of its partition of the
// queue as an External metric. The partition lives in the on-premises cluster (the others serve 0),
// so orders-worker's FederatedHPA scales its total on it, and its overflow tiers fill idc-east-1
// first and send what does not fit there to the clouds.

export const DEMO_QUEUE_APP = "orders-worker";
const METRIC = "orders_queue_depth";
const PARTITION = "idc-east-1";
const DEPTH = 800;

/** Serves the queue; returns what the demo prints, or undefined when the example scales nothing on it. */
export function serveDemoQueue(model: FleetModel, members: readonly SimulatedMember[]): string | undefined {
  const hpa = model.federatedHPAs.find((h) =>
    (h.spec.metrics ?? []).some((m) => m.type === "External" && m.external?.metric.name === METRIC),
  );
  const namespace = hpa?.metadata.namespace;
  if (!hpa || !namespace || !members.some((m) => m.name === PARTITION)) return undefined;
  for (const member of members)
    member.faults.adapterMetrics({
      objects: {},
      external: { [`${namespace}/${METRIC}`]: [{ value: String(member.name === PARTITION ? DEPTH : 0) }] },
    });
  const target = hpa.spec.metrics?.find((m) => m.type === "External")?.external?.target.averageValue ?? "?";
  return `queue: ${DEPTH} orders wait in ${PARTITION}'s partition of ${METRIC} (an External metric every member's adapter serves);
  ${DEMO_QUEUE_APP}'s FederatedHPA (one replica per ${target}) scales it up, and its Placement's overflow tiers
  fill the on-premises clusters first and send what does not fit to the clouds (status/apps/: decision.diagnosis.tiers).
`;
}
