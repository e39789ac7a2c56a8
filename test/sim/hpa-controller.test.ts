import { afterEach, describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { until } from "../helpers/member.js";

// A simulated member runs its HorizontalPodAutoscalers when asked to: load on the pods raises the
// target's replicas through /scale, as kube-controller-manager does, within the HPA's bounds.

let member: SimulatedMember | undefined;
afterEach(async () => {
  await member?.close();
  member = undefined;
});

const post = (path: string, body: unknown) =>
  fetch(`${member?.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const get = async (path: string) => asMap(await (await fetch(`${member?.url}${path}`)).json());

describe("the simulated HPA controller", () => {
  it("scales a Deployment up under load within maxReplicas, as kube-controller-manager through /scale", async () => {
    member = await startMember({ name: "east", world: { readyDelayMs: 10, hpaPeriodMs: 100 } });
    await post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
    await post("/apis/apps/v1/namespaces/shop/deployments", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "shop" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "web", image: "web:1", resources: { requests: { cpu: "100m" } } }] },
        },
      },
    });
    await post("/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers", {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "web", namespace: "shop" },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } },
          },
        ],
      },
    });
    const replicas = async () =>
      Number(asMap((await get("/apis/apps/v1/namespaces/shop/deployments/web")).spec).replicas);
    // Idle pods (10% of the request) below target: the stabilization window (300 s) holds the count.
    // (A fixed wait: several HPA periods pass and nothing may change, which no condition can poll for.)
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await replicas()).toBe(2);
    member.faults.load([{ namespace: "shop", selector: { app: "web" }, cpu: "90m" }]);
    await until(async () => ((await replicas()) === 5 ? true : undefined), 10_000);
    const deployment = await get("/apis/apps/v1/namespaces/shop/deployments/web");
    expect(asList(asMap(deployment.metadata).managedFields)).toContainEqual(
      expect.objectContaining({ manager: "kube-controller-manager", subresource: "scale" }),
    );
    const hpa = await get("/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers/web");
    expect(asMap(hpa.status)).toMatchObject({ desiredReplicas: 5 });
  });
});
