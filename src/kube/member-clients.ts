import type { KubeConfig } from "@kubernetes/client-node";
import { connectionKey } from "./connections.js";
import { MemberClient, type MemberClientOptions } from "./member-client.js";

/**
 * The member clients of one controller: the syncer, the prober and the autoscaler ask here instead of
 * each keeping clients of its own. One client per cluster and way of asking (a probe's short timeout,
 * a sync's retries), made again when the cluster's credentials change (another context, server or
 * file version), so a rotated kubeconfig takes effect without a restart.
 */
export class MemberClientPool {
  private readonly clients = new Map<string, { readonly key: string; readonly client: MemberClient }>();

  constructor(private readonly defaults: MemberClientOptions = {}) {}

  /** The client for a cluster's credentials, with the pool's options and these on top. */
  client(cluster: string, config: KubeConfig, options: MemberClientOptions = {}): MemberClient {
    const merged = { ...this.defaults, ...options };
    const slot = `${cluster}\0${JSON.stringify(merged)}`;
    const key = connectionKey({ config });
    const known = this.clients.get(slot);
    if (known?.key === key) return known.client;
    const client = new MemberClient(cluster, config, merged);
    this.clients.set(slot, { key, client });
    return client;
  }
}
