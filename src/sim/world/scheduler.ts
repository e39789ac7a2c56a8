import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import { add, fits, requestsOf, sameJson, unfitReasons } from "./objects.js";
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
      const { namespace, name } = asMap(pod.metadata);
      world.events.record(pod, SCHEDULER, {
        type: "Normal",
        reason: "Scheduled",
        message: `Successfully assigned ${String(namespace)}/${String(name)} to ${nodeName}`,
        action: "Binding",
      });
    } else {
      const message = unschedulableMessage(pod, nodes, used);
      const condition = { type: "PodScheduled", status: "False", reason: "Unschedulable", message };
      if (!sameJson(asList(asMap(pod.status).conditions), [condition])) {
        world.patchPod(pod, { status: { phase: "Pending", conditions: [condition] } });
        world.events.record(pod, SCHEDULER, {
          type: "Warning",
          reason: "FailedScheduling",
          message,
          action: "Scheduling",
        });
      }
    }
  }
}

const SCHEDULER = { component: "default-scheduler" };

// kube-scheduler's message: how many nodes failed for each reason, reasons in order, then preemption's verdict.
function unschedulableMessage(
  pod: JsonMap,
  nodes: readonly JsonMap[],
  used: ReadonlyMap<string, Record<string, number>>,
): string {
  const counts = new Map<string, number>();
  for (const node of nodes)
    for (const reason of unfitReasons(pod, node, used.get(String(asMap(node.metadata).name)) ?? {}))
      counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const reasons = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([reason, n]) => `${n} ${reason}`);
  const resources = [...counts.keys()].some((r) => r.startsWith("Insufficient") || r === "Too many pods");
  const preemption = resources
    ? `${nodes.length} No preemption victims found for incoming pod.`
    : `${nodes.length} Preemption is not helpful for scheduling.`;
  return `0/${nodes.length} nodes are available: ${reasons.join(", ")}. preemption: 0/${nodes.length} nodes are available: ${preemption}`;
}
