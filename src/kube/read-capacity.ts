import type { ClusterCapacity } from "../model/node-capacity.js";
import {
  addPods,
  type CountedWorkload,
  type RecordedFree,
  type RecordedNode,
  readNodes,
  settleCapacity,
  WorkloadIndex,
} from "../sync/cluster-capacity.js";
import type { MemberClient } from "./member-client.js";

/** Objects per page when nodes and pods are listed: small answers, bounded memory per request. */
export const CAPACITY_PAGE = 500;

// Finished pods request nothing; pods not bound to a node yet take no node's room.
const BOUND_UNFINISHED = "status.phase!=Succeeded,status.phase!=Failed,spec.nodeName!=";

/** What one reading did: the capacity, each node's recorded free amounts, and how much was read. */
export interface CapacityReading {
  readonly capacity: ClusterCapacity;
  readonly recorded: Map<string, RecordedNode>;
  readonly nodes: number;
  readonly pods: number;
}

/**
 * Lists a member's nodes and its bound, unfinished pods a page at a time and settles them into
 * pools; undefined when nodes are not served (or cannot be listed: no permission). Only per-node
 * sums are kept while pages arrive, never the pods; the given workloads' pods are counted per node.
 */
export async function readCapacity(
  client: Pick<MemberClient, "pages">,
  recorded?: RecordedFree,
  limit = CAPACITY_PAGE,
  workloads: readonly CountedWorkload[] = [],
): Promise<CapacityReading | undefined> {
  const index = new WorkloadIndex(workloads);
  const readings = new Map();
  let nodes = 0;
  let pods = 0;
  const listed = await client.pages("v1", "Node", { limit }, (page) => {
    nodes += page.length;
    readNodes(page, readings);
  });
  if (!listed) return undefined;
  await client.pages("v1", "Pod", { limit, fieldSelector: BOUND_UNFINISHED }, (page) => {
    pods += page.length;
    addPods(readings, page, index);
  });
  const settled = settleCapacity(readings, recorded, index.key);
  return { ...settled, nodes, pods };
}

/**
 * Capacity readings of members, each read again only once the last is older than the interval, and
 * each node's free amounts kept as last recorded until they move a full step (see
 * sync/cluster-capacity.ts). A reading that fails keeps the last good one.
 */
export class CapacityReadings {
  private readonly last = new Map<string, { at: number; value: Promise<ClusterCapacity | undefined> }>();
  private readonly recorded = new Map<string, RecordedFree>();
  private readonly good = new Map<string, ClusterCapacity>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** The member's capacity, at most `intervalMs` old, with the given workloads' pods counted. */
  read(
    client: Pick<MemberClient, "cluster" | "pages">,
    intervalMs: number,
    workloads: readonly CountedWorkload[] = [],
  ): Promise<ClusterCapacity | undefined> {
    const now = this.now();
    const last = this.last.get(client.cluster);
    if (last && now - last.at < intervalMs) return last.value;
    const recorded = this.recorded.get(client.cluster);
    const value = readCapacity(client, recorded, CAPACITY_PAGE, workloads).then(
      (reading) => {
        if (!reading) return undefined;
        this.recorded.set(client.cluster, reading.recorded);
        this.good.set(client.cluster, reading.capacity);
        return reading.capacity;
      },
      () => this.good.get(client.cluster),
    );
    this.last.set(client.cluster, { at: now, value });
    return value;
  }
}
