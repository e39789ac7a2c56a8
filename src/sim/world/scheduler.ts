import { asList, asMap } from "../../model/json.js";
import { add, fits, requestsOf, sameJson } from "./objects.js";
import type { WorldContext } from "./world-context.js";
/** The scheduler: binds each unbound pod to the first node it fits, or marks it Unschedulable. */
export function schedulePods(world: WorldContext): void {
  const nodes = world.list("/api/v1/nodes");
  const pods = world.list("/api/v1/pods");
  const used = new Map<string, Record<string, number>>();
  for (const pod of pods) {
    const node = asMap(pod.spec).nodeName;
    if (typeof node === "string") add(used, node, requestsOf(pod));
  }
  for (const pod of pods) {
    if (typeof asMap(pod.spec).nodeName === "string") continue;
    const fit = nodes.find((node) => fits(pod, node, used.get(String(asMap(node.metadata).name)) ?? {}));
    if (fit) {
      const nodeName = String(asMap(fit.metadata).name);
      add(used, nodeName, requestsOf(pod));
      world.patchPod(pod, {
        spec: { nodeName },
        status: { conditions: [{ type: "PodScheduled", status: "True" }] },
      });
    } else {
      const message = `0/${nodes.length} nodes are available: ${nodes.length} Insufficient resources or unmatched node selector or untolerated taint.`;
      const condition = { type: "PodScheduled", status: "False", reason: "Unschedulable", message };
      if (!sameJson(asList(asMap(pod.status).conditions), [condition]))
        world.patchPod(pod, { status: { phase: "Pending", conditions: [condition] } });
    }
  }
}
