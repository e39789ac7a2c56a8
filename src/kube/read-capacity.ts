import { type ClusterCapacity, summarizeCapacity } from "../sync/cluster-capacity.js";
import type { MemberClient } from "./member-client.js";

/** A member's capacity summary, or undefined when its nodes cannot be listed (no permission, not served). */
export async function readCapacity(client: Pick<MemberClient, "list">): Promise<ClusterCapacity | undefined> {
  try {
    const [nodes, pods] = await Promise.all([client.list("v1", "Node", ""), client.list("v1", "Pod", "")]);
    return nodes ? summarizeCapacity(nodes, pods ?? []) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Capacity readings of members, each listed again only once the last is older than the interval.
 * Listing every pod of a large cluster on every sync would cost more than the status it feeds,
 * which is committed at most once per status interval; syncs in between report the last reading.
 */
export class CapacityReadings {
  private readonly last = new Map<string, { at: number; value: Promise<ClusterCapacity | undefined> }>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** The member's capacity, at most `intervalMs` old. */
  read(
    client: Pick<MemberClient, "cluster" | "list">,
    intervalMs: number,
  ): Promise<ClusterCapacity | undefined> {
    const now = this.now();
    const last = this.last.get(client.cluster);
    if (last && now - last.at < intervalMs) return last.value;
    const value = readCapacity(client);
    this.last.set(client.cluster, { at: now, value });
    return value;
  }
}
