import type { NodePool } from "../../src/model/node-capacity.js";

/** A recorded pool of `count` 16-CPU, 64 GiB nodes with `freeCpu` cores free on each, Ready. */
export function nodePool(count: number, freeCpu: number, more: Partial<NodePool> = {}): NodePool {
  return {
    count,
    ready: true,
    unschedulable: false,
    allocatable: { cpu: 16, memory: 64 * 2 ** 30, pods: 110 },
    free: { cpu: freeCpu, memory: 64 * 2 ** 30, pods: 110 },
    labels: {},
    taints: [],
    ...more,
  };
}
