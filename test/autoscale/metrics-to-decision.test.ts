import { afterEach, describe, expect, it } from "vitest";
import { decideReplicas, EMPTY_HISTORY, type PodSample } from "../../src/autoscale/hpa-algorithm.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { podSamples } from "../../src/kube/pod-samples.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { until } from "../helpers/member.js";

// From the members' pods and metrics over HTTP to one decision for the federation: load on one
// cluster's pods raises the global utilization, and the HPA algorithm asks for more replicas.

let members: SimulatedMember[] = [];
afterEach(async () => {
  await Promise.all(members.map((m) => m.close()));
  members = [];
});

const deployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "storefront-api", namespace: "default" },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: "storefront-api" } },
    template: {
      metadata: { labels: { app: "storefront-api" } },
      spec: {
        containers: [
          {
            name: "api",
            image: "ghcr.io/example/api:1",
            resources: { requests: { cpu: "500m", memory: "256Mi" } },
          },
        ],
      },
    },
  },
};

describe("pod samples from members feed the federation's autoscaler", () => {
  it("reads readiness, requests and usage per pod in every cluster, and scales the total up under load", async () => {
    members = await Promise.all(
      ["east", "west"].map((name) => startMember({ name, world: { readyDelayMs: 10 } })),
    );
    const clients = members.map((m) => new MemberClient(m.name, memberClientConfig(m), { retries: 0 }));
    for (const m of members)
      await fetch(`${m.url}/apis/apps/v1/namespaces/default/deployments`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(deployment),
      });
    const gather = async () => {
      const all: PodSample[] = [];
      for (const c of clients)
        all.push(...((await podSamples(c, "default", { app: "storefront-api" })).cpu ?? []));
      return all;
    };
    const idle = await until(async () => {
      const samples = await gather();
      return samples.length === 4 && samples.every((s) => s.ready && s.usage !== undefined)
        ? samples
        : undefined;
    });
    expect(idle.map((s) => [s.cluster, s.request, s.usage])).toEqual([
      ["east", 0.5, 0.05],
      ["east", 0.5, 0.05],
      ["west", 0.5, 0.05],
      ["west", 0.5, 0.05],
    ]);
    const spec = {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "storefront-api" },
      minReplicas: 2,
      maxReplicas: 20,
      metrics: [
        {
          type: "Resource" as const,
          resource: { name: "cpu", target: { type: "Utilization" as const, averageUtilization: 65 } },
        },
      ],
    };
    // Idle at 10% of requests: the 5-minute window keeps the count (a recommendation of 4 a minute ago).
    const quiet = decideReplicas(
      spec,
      { currentReplicas: 4, samples: { cpu: idle } },
      { recommendations: [{ at: Date.now() - 60_000, replicas: 4 }], events: [] },
      Date.now(),
    );
    expect(quiet).toMatchObject({ desiredReplicas: 4, limitedBy: "ScaleDownStabilized" });

    // Load on east's pods only: (0.9·2 + 0.05·2) / (0.5·4) = 95% of requests.
    members[0]?.faults.load([{ namespace: "default", selector: { app: "storefront-api" }, cpu: "900m" }]);
    const loaded = await gather();
    const decision = decideReplicas(
      spec,
      { currentReplicas: 4, samples: { cpu: loaded } },
      EMPTY_HISTORY,
      Date.now(),
    );
    expect(decision).toMatchObject({ desiredReplicas: 6, reason: "cpu 95% > 65%" });
    // A member scaling its own workload: the new pod joins the samples of that cluster.
    await fetch(`${members[1]?.url}/apis/apps/v1/namespaces/default/deployments/storefront-api/scale`, {
      method: "PATCH",
      headers: { "content-type": "application/merge-patch+json" },
      body: JSON.stringify({ spec: { replicas: 3 } }),
    });
    const growing = await until(async () => {
      const samples = await gather();
      return samples.length === 5 ? samples : undefined;
    });
    expect(growing.filter((s) => s.cluster === "west").length).toBe(3);
  });
});
