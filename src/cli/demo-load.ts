import { asList, asMap } from "../apimachinery/json.js";
import { parseQuantity } from "../apimachinery/quantity.js";
import type { FleetModel } from "../model/types.js";
import type { SimulatedMember } from "../sim/member-server.js";

// The demo's load: the example's storefront-api pods run at 90% of their CPU request in every
// member, so its FederatedHPA (target 65%) scales the global total up; the load stops once the
// scale-up is committed, and the total comes down again after the stabilization window.

export const DEMO_LOAD_APP = "storefront-api";
const SHARE = 0.9;

/** Starts the load; returns what the demo prints, or undefined when the example has no such app. */
export function startDemoLoad(model: FleetModel, members: readonly SimulatedMember[]): string | undefined {
  const template = model.apps
    .find((a) => a.name === DEMO_LOAD_APP)
    ?.resources.find((r) => r.kind === "Deployment");
  if (!template?.namespace) return undefined;
  const spec = asMap(template.object.spec);
  const selector = asMap(asMap(spec.selector).matchLabels) as Record<string, string>;
  const containers = asList(asMap(asMap(asMap(spec.template).spec)).containers);
  const request = containers.reduce<number>(
    (sum, c) => sum + (parseQuantity(String(asMap(asMap(asMap(c).resources).requests).cpu ?? "0")) ?? 0),
    0,
  );
  if (request === 0) return undefined;
  const cpu = `${Math.round(request * SHARE * 1000)}m`;
  for (const member of members) member.faults.load([{ namespace: template.namespace, selector, cpu }]);
  return `autoscale: ${DEMO_LOAD_APP}'s pods now use ${cpu} CPU each (${SHARE * 100}% of their ${request * 1000}m request) in every member;
  its FederatedHPA (example-repo/autoscaling/, target 65%) samples them every 5s and scales the global total up —
  the autoscale commit is printed below. The load stops then; the total comes down after the 300s stabilization window.
`;
}

/** Stops the load: every pod back to idle. */
export function stopDemoLoad(members: readonly SimulatedMember[]): void {
  for (const member of members) member.faults.load([]);
}
