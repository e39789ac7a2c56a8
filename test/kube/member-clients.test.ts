import { KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { MemberClientPool } from "../../src/kube/member-clients.js";

/** One pool of member clients for the syncer, the prober and the autoscaler. */
function config(server: string, context = "east"): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: context, server }],
    users: [{ name: context }],
    contexts: [{ name: context, cluster: context, user: context }],
    currentContext: context,
  });
  return kc;
}

describe("the member client pool", () => {
  it("gives one client per cluster and way of asking, and a new one when the credentials change", () => {
    const pool = new MemberClientPool({ timeoutMs: 5000 });
    const sync = pool.client("east", config("https://east.members.example"));
    expect(pool.client("east", config("https://east.members.example"))).toBe(sync);
    // A probe asks with another timeout and no retries: a client of its own.
    const probe = pool.client("east", config("https://east.members.example"), {
      timeoutMs: 1000,
      retries: 0,
    });
    expect(probe).not.toBe(sync);
    expect(pool.client("east", config("https://east.members.example"), { timeoutMs: 1000, retries: 0 })).toBe(
      probe,
    );
    // Another cluster, or the same cluster at another server (a rotated kubeconfig): new clients.
    expect(pool.client("west", config("https://east.members.example"))).not.toBe(sync);
    const moved = pool.client("east", config("https://east-2.members.example"));
    expect(moved).not.toBe(sync);
    expect(pool.client("east", config("https://east-2.members.example"))).toBe(moved);
    expect(moved.cluster).toBe("east");
  });
});
