import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { tempDir } from "../helpers/git-repo.js";
import { kubectlStream, kubectl as kubectlWith, until, writeKubeconfig } from "../helpers/member.js";

/**
 * What happens inside a simulated member's pods, as kubectl shows it: events with counts, container
 * logs (follow, tail, since, previous, container), node metrics, readiness probes and crash loops.
 */
let member: SimulatedMember;
let dir: string;
let cleanup: () => void;
beforeAll(async () => {
  member = await startMember({
    name: "east",
    world: {
      readyDelayMs: 20,
      probePeriodMs: 100,
      nodePools: [{ count: 2, allocatable: { cpu: "2", memory: "4Gi", pods: "110" } }],
    },
  });
  ({ dir, cleanup } = tempDir("gitfleet-pod-life-"));
  writeKubeconfig(`${dir}/kubeconfig`, [member]);
});
afterAll(async () => {
  await member.close();
  cleanup();
});

const kubectl = (...args: string[]) => kubectlWith(`${dir}/kubeconfig`, ...args);
const get = async (path: string): Promise<JsonMap> =>
  (await (await fetch(`${member.url}${path}`)).json()) as JsonMap;
const events = async (namespace: string, selector: string) =>
  ((await get(`/api/v1/namespaces/${namespace}/events?fieldSelector=${encodeURIComponent(selector)}`))
    .items ?? []) as JsonMap[];

async function readyPod(label: string): Promise<string> {
  return until(async () => {
    const out = (await kubectl("get", "pods", "-l", label, "-o", "jsonpath={.items[0].metadata.name}"))
      .stdout;
    const ready = (
      await kubectl(
        "get",
        "pods",
        "-l",
        label,
        "-o",
        "jsonpath={.items[0].status.containerStatuses[0].started}",
      )
    ).stdout;
    return out && ready === "true" ? out : undefined;
  });
}

describe("events", () => {
  it("records the scheduler's, the controllers' and the kubelet's events, as describe shows them", async () => {
    expect(
      (await kubectl("create", "deployment", "web", "--image=registry.example.com/web:1", "--replicas=2"))
        .code,
    ).toBe(0);
    const pod = await readyPod("app=web");
    const about = await events("default", `involvedObject.name=${pod},involvedObject.kind=Pod`);
    expect(about.map((e) => e.reason).sort()).toEqual([
      "Created",
      "Pulled",
      "Pulling",
      "Scheduled",
      "Started",
    ]);
    const scheduled = about.find((e) => e.reason === "Scheduled") as JsonMap;
    expect(scheduled).toMatchObject({
      type: "Normal",
      reportingComponent: "default-scheduler",
      action: "Binding",
      message: expect.stringMatching(new RegExp(`^Successfully assigned default/${pod} to east-node-[01]$`)),
    });
    expect(about.find((e) => e.reason === "Started")).toMatchObject({
      count: 1,
      source: { component: "kubelet" },
      involvedObject: { fieldPath: "spec.containers{web}" },
    });
    const scaling = await events("default", "involvedObject.kind=Deployment,reason=ScalingReplicaSet");
    expect(scaling.map((e) => e.message)).toEqual([
      expect.stringMatching(/^Scaled up replica set web-[0-9a-f]{10} from 0 to 2$/),
    ]);
    const created = await events("default", "reason=SuccessfulCreate,involvedObject.kind=ReplicaSet");
    const pods = (
      await kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}")
    ).stdout
      .split(" ")
      .sort();
    expect(created.map((e) => String(e.message).replace("Created pod: ", "")).sort()).toEqual(pods);
    const described = await kubectl("describe", "pod", pod);
    expect(described.stdout).toMatch(/Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message/);
    expect(described.stdout).toMatch(/Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned/);
  });

  it("says why a pod fits nowhere, as kube-scheduler words it", async () => {
    expect(
      (
        await kubectl(
          "run",
          "huge",
          "--image=registry.example.com/huge:1",
          "--overrides",
          '{"spec":{"containers":[{"name":"huge","image":"registry.example.com/huge:1","resources":{"requests":{"cpu":"64"}}}]}}',
        )
      ).code,
    ).toBe(0);
    const failed = await until(
      async () => (await events("default", "involvedObject.name=huge,reason=FailedScheduling"))[0],
    );
    expect(failed).toMatchObject({
      type: "Warning",
      message:
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
    });
    const status = (await kubectl("get", "pod", "huge", "-o", "jsonpath={.status.conditions[0].message}"))
      .stdout;
    expect(status).toBe(failed.message);
  });

  it("records pulls that fail, and lists them with kubectl", async () => {
    member.faults.unpullableImages(["registry.example.com/gone:1"]);
    expect((await kubectl("run", "gone", "--image=registry.example.com/gone:1")).code).toBe(0);
    await until(async () =>
      (await events("default", "involvedObject.name=gone,reason=BackOff")).length > 0 ? true : undefined,
    );
    const listed = await kubectl(
      "get",
      "events",
      "--field-selector",
      "involvedObject.name=gone",
      "-o",
      "wide",
    );
    expect(listed.stdout).toMatch(
      /Warning\s+Failed\s+pod\/gone\s+spec\.containers\{gone\}\s+kubelet, east-node-[01]\s+Failed to pull image "registry\.example\.com\/gone:1"/,
    );
    expect((await kubectl("get", "pod", "gone", "--no-headers")).stdout).toMatch(
      /^gone\s+0\/1\s+ImagePullBackOff\s/,
    );
    member.faults.unpullableImages([]);
  });

  it("counts a repeated event instead of adding one, and collects events past their TTL", async () => {
    const short = await startMember({
      name: "north",
      world: { readyDelayMs: 20, probePeriodMs: 50, eventTtlMs: 1500 },
    });
    try {
      const probe = { readinessProbe: { httpGet: { path: "/ready", port: 8080 }, periodSeconds: 1 } };
      await fetch(`${short.url}/api/v1/namespaces/default/pods`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "probed", labels: { app: "probed" } },
          spec: { containers: [{ name: "main", image: "registry.example.com/main:1", ...probe }] },
        }),
      });
      short.faults.podFaults([{ namespace: "default", selector: { app: "probed" }, failReadiness: true }]);
      const unhealthy = async () =>
        (
          (await (
            await fetch(`${short.url}/api/v1/namespaces/default/events?fieldSelector=reason%3DUnhealthy`)
          ).json()) as { items: JsonMap[] }
        ).items;
      const counted = await until(async () => {
        const [event] = await unhealthy();
        return event && Number(event.count) >= 3 ? event : undefined;
      });
      expect(await unhealthy()).toHaveLength(1);
      expect(counted).toMatchObject({
        type: "Warning",
        message: "Readiness probe failed: HTTP probe failed with statuscode: 503",
      });
      short.faults.podFaults([]);
      // Once the probe passes nothing repeats it: the event is collected after its TTL.
      await until(async () => ((await unhealthy()).length === 0 ? true : undefined), 8000);
    } finally {
      await short.close();
    }
  });
});

describe("container logs", () => {
  it("serves what a container wrote, with tail, since, timestamps and container", async () => {
    const pod = await readyPod("app=web");
    expect((await kubectl("logs", pod)).stdout).toMatch(
      /^gitfleet simulator: container web started from registry\.example\.com\/web:1 on east-node-[01]\n$/,
    );
    expect((await kubectl("logs", "deploy/web")).stdout).toMatch(/container web started/);
    expect((await kubectl("logs", pod, "--tail=0")).stdout).toBe("");
    expect((await kubectl("logs", pod, "--since=1h")).stdout).toMatch(/started/);
    expect((await kubectl("logs", pod, "--timestamps")).stdout).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z gitfleet simulator/,
    );
    expect(await kubectl("logs", pod, "-c", "nope")).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/container nope is not valid for pod/),
    });
    expect(await kubectl("logs", pod, "--previous")).toMatchObject({
      code: 1,
      stderr: `Error from server (BadRequest): previous terminated container "web" in pod "${pod}" not found\n`,
    });
  });

  it("refuses a container that has not started, saying what it waits for", async () => {
    expect(await kubectl("logs", "huge")).toMatchObject({
      code: 1,
      stderr:
        'Error from server (BadRequest): container "huge" in pod "huge" is waiting to start: ContainerCreating\n',
    });
  });

  it("follows a log until the pod is gone", async () => {
    expect((await kubectl("run", "tail", "--image=registry.example.com/tail:1")).code).toBe(0);
    await readyPod("run=tail");
    const following = kubectlStream(`${dir}/kubeconfig`, "logs", "-f", "tail");
    await following.seen("container tail started");
    // A readiness change writes a line; deleting the pod ends the stream.
    member.faults.podFaults([{ namespace: "default", selector: { run: "tail" }, crashLoop: true }]);
    await until(async () =>
      (await kubectl("get", "pod", "tail", "-o", "jsonpath={.status.containerStatuses[0].restartCount}"))
        .stdout !== "0"
        ? true
        : undefined,
    );
    member.faults.podFaults([]);
    expect((await kubectl("delete", "pod", "tail", "--wait=false")).code).toBe(0);
    const followed = await following.closed();
    expect(followed.code).toBe(0);
    expect(followed.output).toMatch(/container tail started[\s\S]*the process exited with code 1/);
  });
});

describe("probes and crash loops", () => {
  it("keeps a pod whose readiness probe fails Running but not Ready, and Ready once it passes", async () => {
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "api", namespace: "default" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "api" } },
        template: {
          metadata: { labels: { app: "api" } },
          spec: {
            containers: [
              {
                name: "api",
                image: "registry.example.com/api:1",
                readinessProbe: { tcpSocket: { port: 8080 } },
              },
            ],
          },
        },
      },
    };
    member.faults.podFaults([{ namespace: "default", selector: { app: "api" }, failReadiness: true }]);
    await fetch(`${member.url}/apis/apps/v1/namespaces/default/deployments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(deployment),
    });
    const pod = await readyPod("app=api");
    const row = async () =>
      (await kubectl("get", "pod", pod, "--no-headers")).stdout.trim().split(/\s+/).slice(0, 3);
    await until(async () => ((await row()).join(" ") === `${pod} 0/1 Running` ? true : undefined));
    expect((await kubectl("get", "deploy", "api", "--no-headers")).stdout).toMatch(/^api\s+0\/1\s/);
    const [unhealthy] = await events("default", `involvedObject.name=${pod},reason=Unhealthy`);
    expect(unhealthy?.message).toMatch(
      /^Readiness probe failed: dial tcp 10\.244\.\d+\.\d+:8080: connect: connection refused$/,
    );
    member.faults.podFaults([]);
    await until(async () => ((await row()).join(" ") === `${pod} 1/1 Running` ? true : undefined));
    expect((await kubectl("logs", pod)).stdout).toMatch(
      /readiness probe failing\n[\s\S]*readiness probe passing\n$/,
    );
  });

  it("restarts a crash-looping container: restarts counted, BackOff, the previous run's log", async () => {
    expect((await kubectl("run", "crash", "--image=registry.example.com/crash:1")).code).toBe(0);
    await readyPod("run=crash");
    member.faults.podFaults([{ namespace: "default", selector: { run: "crash" }, crashLoop: true }]);
    const crashing = await until(async () => {
      const row = (await kubectl("get", "pod", "crash", "--no-headers")).stdout.trim();
      return /^crash\s+0\/1\s+CrashLoopBackOff\s+([2-9]|\d\d+) \(\d+s ago\)\s/.test(row) ? row : undefined;
    });
    expect(crashing).toBeDefined();
    expect((await kubectl("logs", "crash", "--previous")).stdout).toMatch(
      /the process exited with code 1 \(crashLoop fault\)\n$/,
    );
    const [backOff] = await events("default", "involvedObject.name=crash,reason=BackOff");
    expect(Number(backOff?.count)).toBeGreaterThanOrEqual(2);
    // The cause gone, the container runs again; its restarts stay counted.
    member.faults.podFaults([]);
    await until(async () =>
      /^crash\s+1\/1\s+Running\s+\d+ \(\d+s ago\)\s/.test(
        (await kubectl("get", "pod", "crash", "--no-headers")).stdout,
      )
        ? true
        : undefined,
    );
  });
});

describe("endpoints", () => {
  it("lists the ready pods a Service selects, on its target port", async () => {
    expect((await kubectl("expose", "deployment", "web", "--port=80", "--target-port=8080")).code).toBe(0);
    const ips = (
      await kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.podIP}")
    ).stdout.split(" ");
    const row = await until(async () => {
      const line = (await kubectl("get", "endpoints", "web", "--no-headers")).stdout.trim();
      return line.split(/\s+/)[1]?.includes(",") ? line : undefined;
    });
    const listed = (row.split(/\s+/)[1] ?? "").split(",").sort();
    expect(listed).toEqual(ips.map((ip) => `${ip}:8080`).sort());
    expect((await kubectl("delete", "service", "web")).code).toBe(0);
    await until(async () => ((await kubectl("get", "endpoints", "web")).code === 1 ? true : undefined));
  });
});

describe("node metrics", () => {
  it("answers kubectl top nodes from the pods on each node", async () => {
    member.faults.load([{ namespace: "default", selector: { app: "web" }, cpu: "400m" }]);
    const top = await kubectl("top", "nodes", "--no-headers");
    expect(top.code).toBe(0);
    const rows = top.stdout
      .trim()
      .split("\n")
      .map((line) => line.trim().split(/\s+/));
    expect(rows.map((r) => r[0])).toEqual(["east-node-0", "east-node-1"]);
    // Two web pods at 400m each, plus 100m of system per node.
    const cpu = rows.reduce((sum, r) => sum + Number(String(r[1]).replace("m", "")), 0);
    expect(cpu).toBeGreaterThanOrEqual(1000);
    // The load shows in the containers' logs too.
    const web = await readyPod("app=web");
    expect((await kubectl("logs", web)).stdout).toMatch(/gitfleet simulator: load now cpu 400m\n$/);
    const one = await get("/apis/metrics.k8s.io/v1beta1/nodes/east-node-0");
    expect(one).toMatchObject({
      kind: "NodeMetrics",
      metadata: { name: "east-node-0" },
      usage: { cpu: expect.stringMatching(/m$/), memory: expect.stringMatching(/Ki$/) },
    });
    member.faults.load([]);
  });
});

describe("what simulated containers cannot do", () => {
  it.each([
    [["exec", "huge", "--", "ls"], /exec is not supported by simulated members/],
    [
      ["port-forward", "pod/huge", "18080:80"],
      /portforward is not supported by simulated members|unable to|error/,
    ],
  ])("kubectl %j fails with a clear error", async (args, message) => {
    const result = await kubectl(...args);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });
});
