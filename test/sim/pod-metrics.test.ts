import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { kubectl, until, writeKubeconfig } from "../helpers/member.js";

// metrics.k8s.io on a simulated member: per-pod usage computed from its pods, driven by load rules,
// read by kubectl top as from metrics-server.

let member: SimulatedMember | undefined;
let dir = "";
afterEach(async () => {
  await member?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const get = async (path: string) => {
  const response = await fetch(`${member?.url}${path}`);
  return { status: response.status, body: (await response.json()) as JsonMap };
};

const deployment = (app: string, replicas: number) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: app, namespace: "default" },
  spec: {
    replicas,
    selector: { matchLabels: { app } },
    template: {
      metadata: { labels: { app } },
      spec: {
        containers: [
          {
            name: "main",
            image: "registry.example.com/web:1",
            resources: { requests: { cpu: "500m", memory: "256Mi" } },
          },
        ],
      },
    },
  },
});

describe("pod metrics on a simulated member", () => {
  it("reports each running pod's usage, follows load rules, filters by label, and is read-only", async () => {
    member = await startMember({ name: "east", world: { readyDelayMs: 10 } });
    for (const [app, n] of [
      ["web", 2],
      ["api", 1],
    ] as const)
      await fetch(`${member.url}/apis/apps/v1/namespaces/default/deployments`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(deployment(app, n)),
      });
    const list = await until(async () => {
      const { body } = await get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods");
      return asList(body.items).length === 3 ? body : undefined;
    });
    expect(list.kind).toBe("PodMetricsList");
    // Idle: a tenth of the CPU request, half the memory request.
    const usage = (body: JsonMap) =>
      asList(body.items).map((i) => asMap(asMap(asList(asMap(i).containers)[0]).usage));
    expect(usage(list)).toEqual(Array(3).fill({ cpu: "50m", memory: "131072Ki" }));

    // Load on web only, over HTTP as a demo would drive it.
    const driven = await fetch(`${member.url}/_gitfleet/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ load: [{ namespace: "default", selector: { app: "web" }, cpu: "900m" }] }),
    });
    expect(driven.status).toBe(200);
    const web = await get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb");
    expect(usage(web.body).map((u) => u.cpu)).toEqual(["900m", "900m"]);
    const api = await get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dapi");
    expect(usage(api.body).map((u) => u.cpu)).toEqual(["50m"]);
    const one = String(asMap(asMap(asList(web.body.items)[0]).metadata).name);
    expect((await get(`/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/${one}`)).body.kind).toBe(
      "PodMetrics",
    );
    expect((await get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope")).status).toBe(404);
    const write = await fetch(`${member.url}/apis/metrics.k8s.io/v1beta1/namespaces/default/pods`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(write.status).toBe(405);
    // Discovery names the group, and kubectl top reads it as from metrics-server.
    const groups = asList((await get("/apis")).body.groups).map((g) => asMap(g).name);
    expect(groups).toContain("metrics.k8s.io");
    dir = mkdtempSync(join(tmpdir(), "gitfleet-metrics-"));
    const top = await kubectl(
      writeKubeconfig(join(dir, "kubeconfig"), [member]),
      "top",
      "pod",
      "-l",
      "app=web",
    );
    expect(top.stderr).toBe("");
    expect(top.stdout).toMatch(
      /^NAME +CPU\(cores\) +MEMORY\(bytes\) *\nweb-\S+ +900m +128Mi *\nweb-\S+ +900m +128Mi *\n$/,
    );
  });
});
